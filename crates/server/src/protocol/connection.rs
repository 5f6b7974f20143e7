//! The per-connection message loop after startup: simple query, sync/flush,
//! error recovery, and dispatch to the extended-query handlers.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::sync::Arc;

use common::error::Severity;
use common::interrupt::Interrupts;
use common::{PgError, PgResult, SqlState};
use types::Value;

use super::codec::{ColFmt, MsgReader};
use super::extended::Portal;
use super::stream::{Conn, ReadError};
use super::ProtocolLimits;
use crate::connections::{ConnectionShared, SocketSettings};
use crate::session_api::{ColumnDesc, ResultSink, SessionHandler};

/// Whether the connection goes on after a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    Close,
}

/// The error a sink returns once the client socket has failed.
pub(crate) fn connection_lost() -> PgError {
    PgError::fatal(SqlState("08006"), "connection to client lost")
}

pub(crate) struct Connection<'a, S: Read + Write> {
    pub(crate) io: &'a mut Conn<S>,
    pub(crate) session: Box<dyn SessionHandler>,
    pub(crate) limits: &'a ProtocolLimits,
    pub(crate) interrupts: Arc<Interrupts>,
    /// What the listener's watchdog shares about this connection.
    pub(crate) shared: &'a ConnectionShared,
    /// The socket settings last applied (None: the server's, from accept).
    socket: Option<SocketSettings>,
    pub(crate) portals: HashMap<String, Portal>,
    /// After an error in an extended-query message, everything up to Sync is skipped.
    pub(crate) skip_until_sync: bool,
}

impl<'a, S: Read + Write> Connection<'a, S> {
    pub(crate) fn new(
        io: &'a mut Conn<S>,
        session: Box<dyn SessionHandler>,
        limits: &'a ProtocolLimits,
        shared: &'a ConnectionShared,
    ) -> Self {
        Connection {
            io,
            session,
            limits,
            interrupts: shared.interrupts.clone(),
            shared,
            socket: None,
            portals: HashMap::new(),
            skip_until_sync: false,
        }
    }

    /// Reads and handles messages until the connection ends.
    pub(crate) fn run(&mut self) {
        self.apply_socket_settings();
        let mut body = Vec::new();
        loop {
            // Between messages is a safe point to end the session (fast
            // shutdown, pg_terminate_backend, a client found gone).
            if let Some(e) = self.interrupts.session_ending_error() {
                self.send_error(&e);
                return;
            }
            self.wait_while_listening();
            let ty = match self.io.read_message(self.limits.max_message_len, &mut body) {
                Ok(ty) => ty,
                Err(ReadError::Eof | ReadError::Io) => {
                    // A shutdown wakes an idle session by closing the read
                    // side; the client still gets told why.
                    if let Some(e) = self.interrupts.session_ending_error() {
                        self.send_error(&e);
                    }
                    return;
                }
                Err(ReadError::Fatal(e)) => {
                    self.io.out.error(&e);
                    return;
                }
            };
            let flow = self.handle(ty, &body);
            self.io.spill_if_needed();
            if flow == Flow::Close || self.io.broken {
                return;
            }
        }
    }

    /// While idle outside a transaction block, a listening session waits
    /// for the client's next message or a notification, whichever comes
    /// first, and sends notifications as they arrive.
    fn wait_while_listening(&mut self) {
        let Some(listener) = self.session.notification_listener() else {
            return;
        };
        let Some(fd) = self.shared.socket_fd() else {
            return;
        };
        while self.session.transaction_status() == b'I'
            && !self.io.has_input_without_socket()
            && !self.io.broken
            && crate::notify::wait_for_input_or_notification(fd, &listener)
        {
            self.send_notifications(&listener);
            self.io.flush();
        }
    }

    fn send_notifications(&mut self, listener: &crate::notify::Listener) {
        for n in listener.take() {
            self.io.out.notification(n.pid, &n.channel, &n.payload);
        }
    }

    fn handle(&mut self, ty: u8, body: &[u8]) -> Flow {
        if self.skip_until_sync && !matches!(ty, b'S' | b'X') {
            return Flow::Continue;
        }
        // A SET client_encoding applies from the next message on.
        self.io.out.encoding = self.session.client_encoding();
        match ty {
            b'Q' => self.simple_query(body),
            b'P' => {
                let r = self.parse(body);
                self.extended_result(r)
            }
            b'B' => {
                let r = self.bind(body);
                self.extended_result(r)
            }
            b'D' => {
                let r = self.describe(body);
                self.extended_result(r)
            }
            b'E' => {
                let r = self.execute(body);
                self.extended_result(r)
            }
            b'C' => {
                let r = self.close(body);
                self.extended_result(r)
            }
            b'H' => match MsgReader::new(body).finish() {
                Ok(()) => {
                    self.io.flush();
                    Flow::Continue
                }
                Err(e) => self.send_error(&e),
            },
            b'S' => match MsgReader::new(body).finish() {
                Ok(()) => self.sync(),
                Err(e) => self.send_error(&e),
            },
            b'X' => Flow::Close,
            b'F' => {
                let e = PgError::unsupported("function call protocol is not supported");
                self.io.out.error(&e);
                self.session.on_extended_error();
                // The block just failed: its end commits nothing that could fail.
                let _ = self.session.sync();
                self.ready_for_query();
                Flow::Continue
            }
            // A password message belongs to authentication only.
            b'p' => {
                self.io.out.error(&super::codec::protocol_violation(format!(
                    "invalid frontend message type {ty}"
                )));
                Flow::Close
            }
            // CopyData/CopyDone/CopyFail outside COPY: ignored, as PostgreSQL does.
            _ => Flow::Continue,
        }
    }

    /// Sends an error; a FATAL one ends the connection. Errors are flushed at
    /// once, as PostgreSQL does, so a client waiting after Flush sees them.
    pub(crate) fn send_error(&mut self, e: &PgError) -> Flow {
        self.io.out.error(e);
        self.io.flush();
        if e.severity == Severity::Fatal {
            Flow::Close
        } else {
            Flow::Continue
        }
    }

    /// Error handling for extended-query messages: report, mark the
    /// transaction failed, and skip until Sync.
    fn extended_result(&mut self, r: PgResult<()>) -> Flow {
        match r {
            Ok(()) => Flow::Continue,
            Err(e) => {
                if self.send_error(&e) == Flow::Close {
                    return Flow::Close;
                }
                self.session.on_extended_error();
                self.skip_until_sync = true;
                Flow::Continue
            }
        }
    }

    /// Applies the session's TCP keepalives and hang-up check interval to
    /// this connection when they changed (SET, startup options, a reload):
    /// after each query, before the client's next message.
    fn apply_socket_settings(&mut self) {
        let Some(wanted) = self.session.socket_settings() else {
            return;
        };
        if self.socket != Some(wanted) {
            self.shared.apply_socket_settings(&wanted);
            self.socket = Some(wanted);
        }
    }

    /// ParameterStatus for changed settings, ReadyForQuery, and flush.
    pub(crate) fn ready_for_query(&mut self) {
        self.apply_socket_settings();
        self.io.out.encoding = self.session.client_encoding();
        for (name, value) in self.session.take_changed_parameters() {
            self.io.out.parameter_status(&name, &value);
        }
        let status = self.session.transaction_status();
        if status == b'I' {
            // Portals do not outlive their transaction.
            self.portals.clear();
            if let Some(listener) = self.session.notification_listener() {
                self.send_notifications(&listener);
            }
        }
        self.io.out.ready_for_query(status);
        self.io.flush();
    }

    fn sync(&mut self) -> Flow {
        self.skip_until_sync = false;
        if let Err(e) = self.session.sync() {
            // The implicit transaction's deferred constraints failed at its
            // commit: reported before ReadyForQuery.
            if self.send_error(&e) == Flow::Close {
                return Flow::Close;
            }
        }
        self.ready_for_query();
        Flow::Continue
    }

    fn simple_query(&mut self, body: &[u8]) -> Flow {
        let mut r = MsgReader::with_encoding(body, self.io.out.encoding);
        let sql = match r.cstr().and_then(|sql| r.finish().map(|()| sql)) {
            Ok(sql) => sql,
            Err(e) => {
                if self.send_error(&e) == Flow::Close {
                    return Flow::Close;
                }
                self.ready_for_query();
                return Flow::Continue;
            }
        };
        // A simple query drops the unnamed statement and portal, as in PostgreSQL.
        self.session.statements().remove("");
        self.portals.remove("");
        self.interrupts.clear_cancel();
        let mut sink = SimpleSink {
            settings: self.session.io_settings(),
            io: &mut *self.io,
            fmts: Vec::new(),
            names: None,
        };
        let result = self.session.simple_query(&sql, &mut sink);
        if self.io.broken {
            return Flow::Close;
        }
        match result {
            Ok(true) => {}
            Ok(false) => self.io.out.empty_query(),
            Err(e) => {
                if self.send_error(&e) == Flow::Close {
                    return Flow::Close;
                }
            }
        }
        self.ready_for_query();
        Flow::Continue
    }
}

/// Writes each statement's results of a simple query straight to the client, in text.
struct SimpleSink<'c, S: Read + Write> {
    /// The session's settings rows are written with.
    settings: types::IoSettings,
    io: &'c mut Conn<S>,
    fmts: Vec<ColFmt>,
    /// Prints reg* columns as names.
    names: Option<std::sync::Arc<dyn crate::session_api::RegOutput>>,
}

impl<S: Read + Write> ResultSink for SimpleSink<'_, S> {
    fn columns(&mut self, columns: &[ColumnDesc]) -> PgResult<()> {
        self.fmts = ColFmt::for_columns(columns, |_| false);
        self.io.out.row_description(columns, |_| false)?;
        self.io.check_sink()
    }

    fn binary_columns(&mut self, columns: &[ColumnDesc]) -> PgResult<()> {
        self.fmts = ColFmt::for_columns(columns, |_| true);
        self.io.out.row_description(columns, |_| true)?;
        self.io.check_sink()
    }

    fn row(&mut self, row: &[Value]) -> PgResult<()> {
        let fmts = &self.fmts;
        let row = crate::session_api::with_reg_names(
            row,
            |i| fmts.get(i).and_then(|f| Some((f.ty?, f.binary))),
            self.names.as_deref(),
        );
        self.io.out.data_row(&row, &self.fmts, &self.settings)?;
        self.io.check_sink()
    }

    fn complete(&mut self, tag: &str) -> PgResult<()> {
        self.io.out.command_complete(tag);
        self.fmts.clear();
        self.io.check_sink()
    }

    fn notice(&mut self, notice: &PgError) -> PgResult<()> {
        // Flushed at once, as PostgreSQL does, so progress notices show up.
        self.io.out.notice(notice);
        self.io.flush();
        self.io.check_sink()
    }

    fn output_settings(&mut self, io: &types::IoSettings) {
        self.settings = *io;
    }

    fn output_names(&mut self, names: std::sync::Arc<dyn crate::session_api::RegOutput>) {
        self.names = Some(names);
    }

    fn output_encoding(&mut self, encoding: super::ClientEncoding) {
        self.io.out.encoding = encoding;
    }

    fn copy_in_start(
        &mut self,
        columns: usize,
        encoding: Option<types::encoding::PgEncoding>,
    ) -> PgResult<()> {
        self.io.copy_in_start(columns, encoding)
    }

    fn copy_in_next(&mut self, out: &mut Vec<u8>) -> PgResult<bool> {
        self.io.copy_in_next(out)
    }

    fn copy_out_start(
        &mut self,
        columns: usize,
        encoding: Option<types::encoding::PgEncoding>,
    ) -> PgResult<()> {
        self.io.copy_out_start(columns, encoding)
    }

    fn copy_out_data(&mut self, data: &[u8]) -> PgResult<()> {
        self.io.copy_out_data(data)
    }

    fn copy_out_done(&mut self) -> PgResult<()> {
        self.io.copy_out_done()
    }
}
