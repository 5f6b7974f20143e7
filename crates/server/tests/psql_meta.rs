//! psql's catalog meta-commands that work so far.

mod support;

use support::TestServer;

#[test]
fn dt_and_dn_list_tables_and_schemas() {
    let s = TestServer::start();
    s.psql("create table widgets(a int)");
    let mut cmd = s.psql_command();
    cmd.arg("-c").arg("\\dt");
    let out = s.run_psql(cmd);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "\\dt failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("public|widgets|table|postgres"),
        "\\dt printed {text:?}"
    );
    let mut cmd = s.psql_command();
    cmd.arg("-c").arg("\\dn");
    let out = s.run_psql(cmd);
    // PostgreSQL 15's public schema belongs to pg_database_owner.
    assert!(String::from_utf8_lossy(&out.stdout).contains("public|pg_database_owner"));
    assert_eq!(
        s.psql("select 'b' < 'a' collate \"C\", 'x' collate pg_catalog.default = 'x'")
            .trim(),
        "f|t"
    );
}
