//! The contract between the wire protocol (`protocol/`) and the SQL session
//! (`session.rs`). The protocol layer owns framing, message order, portal
//! names and value encoding; the session owns parsing, planning, execution,
//! transactions, settings, SQL cursors and the named prepared statements
//! (one namespace for Parse and SQL's PREPARE).

use crate::protocol::ClientEncoding;
use std::any::Any;
use std::sync::Arc;
use types::encoding::PgEncoding;

use common::{PgError, PgResult};
use types::{IoSettings, Value};

pub use crate::prepared_statements::StatementRegistry;

/// One column of a result, as sent in RowDescription.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDesc {
    pub name: String,
    /// Oid of the table the column comes from, or 0.
    pub table_oid: u32,
    /// Attribute number in that table, or 0.
    pub column_id: i16,
    pub type_oid: u32,
    pub type_len: i16,
    pub type_mod: i32,
}

/// Receives the results of one statement, in order: `columns` at most once
/// (only for statements that return rows), then `row` per row, then `complete`.
pub trait ResultSink {
    fn columns(&mut self, columns: &[ColumnDesc]) -> PgResult<()>;
    /// As `columns`, for rows a BINARY cursor's FETCH returns: a simple
    /// query sends them in binary; the extended protocol keeps Bind's formats.
    fn binary_columns(&mut self, columns: &[ColumnDesc]) -> PgResult<()> {
        self.columns(columns)
    }
    fn row(&mut self, row: &[Value]) -> PgResult<()>;
    /// `tag` is the CommandComplete tag, e.g. "SELECT 3" or "INSERT 0 1".
    fn complete(&mut self, tag: &str) -> PgResult<()>;
    /// A notice (e.g. "table does not exist, skipping") raised while executing.
    fn notice(&mut self, notice: &PgError) -> PgResult<()>;
    /// The session's settings the rows sent from now on are written with
    /// (TimeZone); the session says so before each statement's results.
    fn output_settings(&mut self, io: &IoSettings);
    /// The client encoding text sent from now on is converted to; the
    /// session says so before each statement's results, so a SET earlier in
    /// the same Query applies to the statements after it.
    fn output_encoding(&mut self, encoding: ClientEncoding) {
        let _ = encoding;
    }
    /// How reg* values (regclass, regtype ...) in the rows sent from now on
    /// print in text format: as names, looked up in the statement's catalog.
    fn output_names(&mut self, names: Arc<dyn RegOutput>) {
        let _ = names;
    }
    /// COPY FROM STDIN: asks the client for data (CopyInResponse); the data
    /// is in `encoding` (COPY's ENCODING option), else the client's.
    fn copy_in_start(&mut self, columns: usize, encoding: Option<PgEncoding>) -> PgResult<()> {
        let _ = (columns, encoding);
        Err(PgError::unsupported("COPY FROM STDIN is not possible here"))
    }
    /// The next chunk of COPY data into `out`; false once the client is done.
    fn copy_in_next(&mut self, out: &mut Vec<u8>) -> PgResult<bool> {
        let _ = out;
        Err(PgError::unsupported("COPY FROM STDIN is not possible here"))
    }
    /// COPY TO STDOUT: CopyOutResponse, then data (sent in `encoding`, else
    /// the client's), then done.
    fn copy_out_start(&mut self, columns: usize, encoding: Option<PgEncoding>) -> PgResult<()> {
        let _ = (columns, encoding);
        Err(PgError::unsupported("COPY TO STDOUT is not possible here"))
    }
    fn copy_out_data(&mut self, data: &[u8]) -> PgResult<()> {
        let _ = data;
        Err(PgError::unsupported("COPY TO STDOUT is not possible here"))
    }
    fn copy_out_done(&mut self) -> PgResult<()> {
        Err(PgError::unsupported("COPY TO STDOUT is not possible here"))
    }
}

/// The output function of the reg* types, which needs the catalog.
pub trait RegOutput {
    /// The text form of `oid` as a value of reg* type `ty`.
    fn reg_name(&self, ty: types::TypeId, oid: u32) -> String;
}

/// `row` with its reg* values in text-format columns replaced by their
/// names (binary format sends the oid itself); borrowed when there are none.
pub fn with_reg_names<'r>(
    row: &'r [Value],
    column_type: impl Fn(usize) -> Option<(types::TypeId, bool)>,
    names: Option<&dyn RegOutput>,
) -> std::borrow::Cow<'r, [Value]> {
    let Some(names) = names else {
        return std::borrow::Cow::Borrowed(row);
    };
    let named = |i: usize, v: &Value| match (column_type(i), v) {
        (Some((ty, false)), Value::Oid(oid)) if ty.is_reg() => Some(names.reg_name(ty, *oid)),
        _ => None,
    };
    if !row.iter().enumerate().any(|(i, v)| named(i, v).is_some()) {
        return std::borrow::Cow::Borrowed(row);
    }
    std::borrow::Cow::Owned(
        row.iter()
            .enumerate()
            .map(|(i, v)| named(i, v).map_or_else(|| v.clone(), Value::Text))
            .collect(),
    )
}

/// A parsed and analyzed statement (extended protocol's Parse).
pub struct PreparedStatement {
    pub sql: String,
    /// Parameter type oids, resolved (never 0 after prepare succeeds).
    pub param_types: Vec<u32>,
    /// Result columns, or None for statements that return no rows (NoData).
    pub columns: Option<Vec<ColumnDesc>>,
    /// Session-private compiled form.
    pub inner: Arc<dyn std::any::Any + Send + Sync>,
}

/// What the protocol layer needs from a SQL session.
pub trait SessionHandler {
    /// ParameterStatus pairs to send after authentication.
    fn startup_parameters(&self) -> Vec<(String, String)>;
    /// Settings reported to the client that changed since the last call
    /// (sent as ParameterStatus before ReadyForQuery).
    fn take_changed_parameters(&mut self) -> Vec<(String, String)>;
    /// 'I' idle, 'T' in a transaction block, 'E' in a failed transaction block.
    fn transaction_status(&self) -> u8;
    /// Runs every statement of a simple Query message in order, stopping at the
    /// first error, which is returned. Returns Ok(false) if the string held no
    /// statement at all (EmptyQueryResponse).
    fn simple_query(&mut self, sql: &str, sink: &mut dyn ResultSink) -> PgResult<bool>;
    /// Parses one statement (extended protocol). `param_types` may hold 0 for
    /// "infer". Empty string gives a statement that completes as EmptyQueryResponse:
    /// it is reported with `columns == None` and `sql` empty.
    fn prepare(&mut self, sql: &str, param_types: &[u32]) -> PgResult<PreparedStatement>;
    /// Executes a prepared statement with bound parameter values, streaming all rows.
    fn execute(
        &mut self,
        stmt: &PreparedStatement,
        params: &[Value],
        sink: &mut dyn ResultSink,
    ) -> PgResult<()>;
    /// Executes a portal, sending at most `max_rows` rows (0: all). A query
    /// stopped at the limit returns its cursor, continued by `fetch`; a
    /// statement that cannot stop part-way runs to completion and returns None
    /// (the protocol layer keeps its remaining rows).
    fn execute_portal(
        &mut self,
        stmt: &PreparedStatement,
        params: &[Value],
        sink: &mut dyn ResultSink,
        max_rows: usize,
    ) -> PgResult<Option<Box<dyn Any>>> {
        let _ = max_rows;
        self.execute(stmt, params, sink).map(|()| None)
    }
    /// Sends up to `max_rows` (0: all) more rows of a cursor returned by
    /// `execute_portal`, then CommandComplete if it ran out. Returns whether
    /// rows may remain (the portal stays suspended).
    fn fetch(
        &mut self,
        cursor: &mut dyn Any,
        sink: &mut dyn ResultSink,
        max_rows: usize,
    ) -> PgResult<bool> {
        let _ = (cursor, sink, max_rows);
        Err(PgError::internal("this session has no cursors"))
    }
    /// The named prepared statements, shared by Parse/Bind/Describe/Close and
    /// SQL's PREPARE/EXECUTE/DEALLOCATE.
    fn statements(&mut self) -> &mut StatementRegistry;
    /// The columns of the SQL cursor `name` (DECLARE), for a Describe of a
    /// portal the protocol layer does not have; None if there is none.
    fn cursor_columns(&self, name: &str) -> Option<Vec<ColumnDesc>> {
        let _ = name;
        None
    }
    /// Called when an error was sent in the extended protocol, so an open
    /// transaction block becomes failed until ROLLBACK.
    fn on_extended_error(&mut self);

    /// The session's LISTEN registration, once it has listened.
    fn notification_listener(&self) -> Option<Arc<crate::notify::Listener>> {
        None
    }
    /// Called at Sync: ends an implicit transaction if no block is open.
    fn sync(&mut self) -> PgResult<()>;
    /// The settings values are read and written with now (TimeZone): Bind's
    /// text parameters, and rows the protocol layer sends itself.
    fn io_settings(&self) -> IoSettings;
    /// The session's client_encoding, typed.
    fn client_encoding(&self) -> ClientEncoding {
        ClientEncoding::UTF8
    }
    /// The session's TCP keepalive and hang-up check settings, which the
    /// protocol layer applies to the connection; None leaves the server's.
    fn socket_settings(&self) -> Option<crate::connections::SocketSettings> {
        None
    }
}

/// Parameters of a StartupMessage.
#[derive(Debug, Clone, Default)]
pub struct StartupParams {
    pub user: String,
    pub database: String,
    /// Every other startup parameter (application_name, client_encoding, ...), plus
    /// the `-c name=value` / `--name=value` settings found in `options`.
    pub settings: Vec<(String, String)>,
    /// Set by the protocol layer for a TLS connection (never from the
    /// packet): what pg_stat_ssl shows.
    pub ssl: Option<crate::tls::SslInfo>,
}

/// Opens SQL sessions for new connections.
pub trait SessionFactory: Send + Sync {
    /// `pid` is the backend's process id as sent in BackendKeyData;
    /// `interrupts` are raised by a CancelRequest naming this backend, by a
    /// shutdown and by the connection watchdog; the session polls them.
    fn open(
        &self,
        params: &StartupParams,
        pid: i32,
        interrupts: std::sync::Arc<common::interrupt::Interrupts>,
    ) -> PgResult<Box<dyn SessionHandler>>;

    /// The pg_hba.conf rules in force; None accepts everyone (trust), for
    /// embedders and protocol tests without a data directory.
    fn hba(&self) -> Option<Arc<crate::auth::hba::HbaConfig>> {
        None
    }

    /// The TLS configuration for SSLRequests on TCP connections; None
    /// answers them 'N' (`ssl = off`).
    fn tls(&self) -> Option<Arc<rustls::ServerConfig>> {
        None
    }

    /// The role's stored password verifier; None if the role does not exist
    /// or has no password.
    fn role_password(&self, _user: &str) -> Option<String> {
        None
    }
}
