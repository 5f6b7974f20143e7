//! Real clients (the `postgres` crate and psql) against the mock session over TCP.

use std::net::TcpListener;

use super::*;

/// Serves the mock on a TCP port; connections are handled on their own threads.
fn tcp_server() -> (u16, Arc<BackendRegistry>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = Server::new();
    let registry = server.registry.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { break };
            let factory = server.factory.clone();
            let registry = server.registry.clone();
            let limits = server.limits.clone();
            std::thread::spawn(move || {
                let _ = stream.set_nodelay(true);
                let shared = crate::connections::ConnectionShared::default();
                serve_connection(stream, &*factory, &registry, &limits, &shared);
            });
        }
    });
    (port, registry)
}

#[test]
fn postgres_crate_client() {
    use postgres::types::Type;
    use postgres::{Client, NoTls};

    let (port, registry) = tcp_server();
    let mut client = Client::connect(
        &format!("host=127.0.0.1 port={port} user=alice dbname=db"),
        NoTls,
    )
    .unwrap();
    assert_eq!(registry.count(), 1);

    // Simple query, text results.
    let msgs = client.simple_query("select; insert").unwrap();
    let rows: Vec<_> = msgs
        .iter()
        .filter_map(|m| match m {
            postgres::SimpleQueryMessage::Row(r) => {
                Some((r.get(0).map(str::to_string), r.get(1).map(str::to_string)))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            (Some("1".into()), Some("one".into())),
            (Some("2".into()), None)
        ]
    );

    // Extended protocol, binary parameters and results.
    let stmt = client
        .prepare_typed("echo $1 $2", &[Type::INT4, Type::TEXT])
        .unwrap();
    let row = client.query_one(&stmt, &[&42i32, &"hi"]).unwrap();
    assert_eq!(row.get::<_, i32>(0), 42);
    assert_eq!(row.get::<_, &str>(1), "hi");
    let rows = client.query("gen 1000", &[]).unwrap();
    assert_eq!(rows.len(), 1000);
    assert_eq!(rows[999].get::<_, i32>(0), 1000);

    // Errors carry their SQLSTATE and the connection goes on.
    let err = client.simple_query("bogus").unwrap_err();
    assert_eq!(err.code(), Some(&postgres::error::SqlState::SYNTAX_ERROR));
    let err = client.prepare("bogus").unwrap_err();
    assert_eq!(err.code(), Some(&postgres::error::SqlState::SYNTAX_ERROR));

    // Portals fetched in batches (Execute with max_rows) inside a transaction.
    let mut tx = client.transaction().unwrap();
    let portal = tx.bind("gen 25", &[]).unwrap();
    let mut total = 0;
    loop {
        let batch = tx.query_portal(&portal, 10).unwrap();
        total += batch.len();
        if batch.len() < 10 {
            break;
        }
    }
    assert_eq!(total, 25);
    tx.commit().unwrap();

    drop(client);
    let start = Instant::now();
    while registry.count() != 0 && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(registry.count(), 0);
}

#[test]
fn psql_client() {
    let psql = std::path::Path::new("/usr/bin/psql");
    if !psql.exists() {
        eprintln!("psql not installed; skipping");
        return;
    }
    let (port, _registry) = tcp_server();
    let out = std::process::Command::new(psql)
        .args([
            "-X",
            "-A",
            "-t",
            "-h",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-U",
            "alice",
            "-d",
            "db",
            "-c",
            "select",
            "-c",
            "bogus",
        ])
        .env("PGCONNECT_TIMEOUT", "10")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stdout, "1|one\n2|\n", "stderr: {stderr}");
    assert!(
        stderr.contains("syntax error at or near \"bogus\""),
        "stderr: {stderr}"
    );
}
