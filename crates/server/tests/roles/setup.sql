create role r_admin superuser createdb createrole login replication bypassrls;
create user r_app connection limit 2 valid until '2030-01-02 03:04:05+00';
create role r_group nologin noinherit;
create role r_db createdb createrole;
create user r_limited connection limit 0;
