-- \d of a table with triggers (psql_describe.rs: describe_lists_triggers).
create table trg (id int primary key, v text);
create function trg_fn() returns trigger language plpgsql as $$ begin return new; end $$;
create trigger trg_before before insert or update of v on trg for each row execute function trg_fn();
create trigger trg_stmt after delete on trg execute function trg_fn('a');
create trigger trg_off after insert on trg for each row execute function trg_fn();
alter table trg disable trigger trg_off;
