// The client matrix for node-postgres: every check prints one line, and
// tests/client_matrix.rs compares the whole transcript with the one
// PostgreSQL 15 gives. Run as `node matrix.js PORT` with NODE_PATH set to
// the node_modules tests/clients/setup.sh installed.
'use strict';
const { Client } = require('pg');

const port = Number(process.argv[2]);

function show(v) {
  if (v === null || v === undefined) return String(v);
  if (Buffer.isBuffer(v)) return `Buffer<${v.toString('hex')}>`;
  if (v instanceof Date) return `Date<${isNaN(v) ? 'invalid' : v.toISOString()}>`;
  if (Array.isArray(v)) return `[${v.map(show).join(', ')}]`;
  if (typeof v === 'object') {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${k}: ${show(v[k])}`).join(', ')}}`;
  }
  return `${typeof v}:${JSON.stringify(v)}`;
}

function showError(e) {
  return `ERROR ${e.code} ${e.message} | schema=${e.schema} table=${e.table} ` +
    `column=${e.column} constraint=${e.constraint} hint=${e.hint}`;
}

async function main() {
  const c = new Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
  await c.connect();
  const line = (label, v) => console.log(`${label}: ${v}`);
  const check = async (label, fn) => {
    try {
      line(label, show(await fn()));
    } catch (e) {
      line(label, showError(e));
    }
  };
  const rows = async (q, params) => (await c.query(q, params)).rows;

  await c.query("set timezone = 'America/New_York'");
  const literals = [
    '1::int2', '2::int4', '3::int8', '1.5::float4', '2.25::float8', '1.50::numeric', 'true',
    "'x'::text", "'b'::char(3)", "'\\x0001ff'::bytea", `'{"a": 1}'::json`,
    `'{"b": [1, 2.50], "a": "x"}'::jsonb`, "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid",
    "'1 year 2 mons 3 days 04:05:06.5'::interval", "'2024-02-29'::date",
    "'2024-02-29 12:34:56.789'::timestamp", "'2024-03-10 07:30:00+00'::timestamptz",
    "'{1,2,3}'::int4[]", "'{\"a b\",NULL}'::text[]", 'NULL::int',
  ];
  for (const lit of literals) {
    await check(`select ${lit}`, () => rows(`select ${lit} as v`));
  }
  // Parameters go through the extended protocol as text.
  const params = [
    ['int', 42], ['float', 0.1], ['string', "it's"], ['bool', true], ['null', null],
    ['buffer', Buffer.from([0, 1, 254])], ['date', new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 6))],
    ['object', { a: [1, 'two'] }], ['array', [1, 2, 3]],
  ];
  for (const [name, value] of params) {
    await check(`param ${name}`, () => rows('select $1 as v', [value]));
  }
  await check('param typed', () => rows('select $1::int + $2::numeric as v', [1, '2.5']));

  // Named (prepared) statements, run twice with other values.
  for (const v of [1, 2]) {
    await check(`named statement ${v}`, () =>
      c.query({ name: 'matrix_named', text: 'select $1::int * 10 as v', values: [v] })
        .then((r) => r.rows));
  }
  await check('fields', async () => {
    const r = await c.query('select 1::int4 as a, \'x\'::text as b, 1.5::numeric as c');
    return r.fields.map((f) => `${f.name}/${f.dataTypeID}`);
  });

  // A table, transactions and savepoints.
  await c.query('drop table if exists matrix_node');
  await c.query('create table matrix_node (id serial primary key, k text unique not null, ' +
    'doc jsonb, at timestamptz)');
  await c.query('begin');
  await c.query('insert into matrix_node (k, doc, at) values ($1, $2, $3)',
    ['a', { x: 1 }, new Date(Date.UTC(2020, 5, 1))]);
  await c.query('savepoint s1');
  await check('unique violation', () => c.query("insert into matrix_node (k) values ('a')"));
  await c.query('rollback to savepoint s1');
  await c.query("insert into matrix_node (k) values ('b')");
  await c.query('commit');
  await check('rows', () => rows('select id, k, doc, at from matrix_node order by id'));
  await c.query('begin');
  await c.query("insert into matrix_node (k) values ('c')");
  await c.query('rollback');
  await check('after rollback', () => rows('select count(*) as n from matrix_node'));
  await check('not null violation', () => c.query('insert into matrix_node (k) values (null)'));
  await check('syntax error', () => c.query('selec 1'));
  await check('undefined function', () => c.query('select nosuch_fn(1)'));
  await c.query('drop table matrix_node');
  await c.end();
  console.log('done');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
