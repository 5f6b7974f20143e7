//! nextval, currval, setval, lastval and pg_get_serial_sequence: the
//! sequence's page through `access::sequence`, the session's last values
//! through `SessionHooks`.

use catalog::Sequence;
use common::{PgError, PgResult, SqlState};
use sql::expr::SysFunc;
use types::Value;

use crate::ExecEnv;

fn sequence_of<'e>(v: &Value, env: &'e ExecEnv) -> PgResult<&'e Sequence> {
    let Value::Oid(oid) = v else {
        return Err(PgError::internal("sequence argument is not an oid"));
    };
    env.catalog.sequences.get(oid).ok_or_else(|| {
        let name = env
            .catalog
            .relation_by_oid(*oid)
            .map_or_else(|| oid.to_string(), |(n, _, _)| n.to_string());
        PgError::new(
            SqlState::WRONG_OBJECT_TYPE,
            format!("\"{name}\" is not a sequence"),
        )
    })
}

fn params(q: &Sequence) -> access::sequence::SeqParams {
    access::sequence::SeqParams {
        increment: q.increment,
        min: q.min,
        max: q.max,
        cycle: q.cycle,
    }
}

pub(crate) fn eval(func: SysFunc, args: &[Value], env: &mut ExecEnv) -> PgResult<Value> {
    if func != SysFunc::LastVal && args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    Ok(match func {
        SysFunc::NextVal => {
            let q = sequence_of(&args[0], env)?;
            let (v, logged) =
                access::sequence::next(env.pool, env.tm.wal(), q.locator(), params(q), &q.name)?;
            let oid = q.oid;
            env.hooks.sequence_value_used(oid, v);
            if let Some(lsn) = logged {
                env.hooks.flush_at_commit(lsn);
            }
            Value::Int8(v)
        }
        SysFunc::CurrVal => {
            let q = sequence_of(&args[0], env)?;
            match env.hooks.sequence_last_value(Some(q.oid)) {
                Some(v) => Value::Int8(v),
                None => {
                    return Err(PgError::new(
                        SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                        format!(
                            "currval of sequence \"{}\" is not yet defined in this session",
                            q.name
                        ),
                    ))
                }
            }
        }
        SysFunc::LastVal => match env.hooks.sequence_last_value(None) {
            Some(v) => Value::Int8(v),
            None => {
                return Err(PgError::new(
                    SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                    "lastval is not yet defined in this session",
                ))
            }
        },
        SysFunc::SetVal => {
            let q = sequence_of(&args[0], env)?;
            let Value::Int8(v) = args[1] else {
                return Err(PgError::internal("setval value is not bigint"));
            };
            let is_called = !matches!(args.get(2), Some(Value::Bool(false)));
            if v < q.min || v > q.max {
                return Err(PgError::new(
                    SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
                    format!(
                        "setval: value {v} is out of bounds for sequence \"{}\" ({}..{})",
                        q.name, q.min, q.max
                    ),
                ));
            }
            access::sequence::set(env.pool, env.tm.wal(), q.locator(), v, is_called)?;
            if is_called {
                let oid = q.oid;
                env.hooks.sequence_value_used(oid, v);
            }
            Value::Int8(v)
        }
        SysFunc::GetSerialSequence => serial_sequence(args, env)?,
        _ => unreachable!("not a sequence function"),
    })
}

/// pg_get_serial_sequence(table, column): the qualified name of the
/// sequence the column owns, NULL when it owns none.
fn serial_sequence(args: &[Value], env: &ExecEnv) -> PgResult<Value> {
    let (Value::Text(table), Value::Text(column)) = (&args[0], &args[1]) else {
        return Ok(Value::Null);
    };
    let cat = env.catalog;
    let parts: Vec<&str> = table.split('.').collect();
    let found = match parts.as_slice() {
        [name] => cat.tables.values().find(|t| {
            t.db_oid == env.db_oid && t.name == *name && t.namespace == catalog::PUBLIC_NAMESPACE
        }),
        [schema, name] => cat
            .namespace_by_name(env.db_oid, schema)
            .and_then(|ns| cat.table(env.db_oid, ns.oid, name)),
        _ => None,
    };
    let Some(t) = found else {
        return Err(PgError::new(
            SqlState::UNDEFINED_TABLE,
            format!("relation \"{table}\" does not exist"),
        ));
    };
    let Some(index) = t.column_index(column) else {
        return Err(PgError::new(
            SqlState::UNDEFINED_COLUMN,
            format!(
                "column \"{column}\" of relation \"{}\" does not exist",
                t.name
            ),
        ));
    };
    let owner = (t.oid, index as i16 + 1);
    Ok(cat
        .sequences
        .values()
        .find(|q| q.owned_by == Some(owner))
        .map_or(Value::Null, |q| {
            let schema = cat
                .namespaces
                .get(&q.namespace)
                .map_or("", |n| n.name.as_str());
            Value::Text(format!("{schema}.{}", q.name))
        }))
}
