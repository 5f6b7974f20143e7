//! Extended query protocol: Parse, Bind, Describe, Execute (with row limits
//! and PortalSuspended) and Close, over named/unnamed statements and portals.

use std::any::Any;
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::rc::Rc;

use common::{PgError, PgResult, SqlState};
use types::io::{parse_binary, parse_text};
use types::{DataType, IoSettings, TypeId, Value};

use super::codec::{binary_param_to_server, protocol_violation, ColFmt, MsgReader};
use super::connection::{connection_lost, Connection};
use super::encoding::ClientEncoding;
use super::stream::Conn;
use crate::session_api::{ColumnDesc, PreparedStatement, ResultSink};

/// A bound statement, ready to execute (or partly executed).
pub(crate) struct Portal {
    stmt: Rc<PreparedStatement>,
    params: Vec<Value>,
    /// Per result column: type and output format.
    fmts: Vec<ColFmt>,
    state: PortalState,
}

enum PortalState {
    /// Not executed yet.
    Ready,
    /// Executed with a row limit that was reached; `rows` are still to be sent.
    /// (Statements that run to completion at once, e.g. INSERT ... RETURNING.)
    Suspended {
        rows: VecDeque<Vec<Value>>,
        tag: String,
    },
    /// A query stopped at a row limit: the session's cursor makes the next
    /// rows on demand, so nothing is materialised.
    Streaming { cursor: Box<dyn Any> },
    /// Ran to completion with this tag.
    Done { tag: String },
}

/// The CommandComplete tag for a batch of `n` rows of a portal that was
/// suspended: PostgreSQL counts only the rows of the last Execute for a
/// SELECT, and repeats the full tag of statements run to completion at once
/// (INSERT ... RETURNING, SHOW, ...).
fn batch_tag(tag: &str, n: usize) -> String {
    if tag.starts_with("SELECT ") || tag == "SELECT" {
        format!("SELECT {n}")
    } else {
        tag.to_string()
    }
}

/// Resolves format code `i` of a Bind message's list: none means all text,
/// one applies to all, else one per value.
fn format_is_binary(codes: &[i16], i: usize) -> PgResult<bool> {
    let code = match codes {
        [] => 0,
        [only] => *only,
        _ => codes.get(i).copied().unwrap_or(0),
    };
    match code {
        0 => Ok(false),
        1 => Ok(true),
        c => Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("unsupported format code: {c}"),
        )),
    }
}

fn read_format_codes(r: &mut MsgReader<'_>) -> PgResult<Vec<i16>> {
    let n = r.u16()? as usize;
    if n * 2 > r.remaining() {
        return Err(protocol_violation("insufficient data left in message"));
    }
    (0..n).map(|_| r.i16()).collect()
}

fn no_statement(name: &str) -> PgError {
    crate::prepared_statements::no_such_statement(name)
}

fn no_portal(name: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_CURSOR_NAME,
        format!("portal \"{name}\" does not exist"),
    )
}

fn decode_param(
    oid: u32,
    binary: bool,
    bytes: &[u8],
    index: usize,
    io: &IoSettings,
    encoding: ClientEncoding,
) -> PgResult<Value> {
    let Some(ty) = TypeId::from_oid(oid) else {
        return Err(PgError::unsupported(format!(
            "unsupported type {oid} of parameter ${}",
            index + 1
        )));
    };
    if binary {
        let bytes = binary_param_to_server(ty, bytes, encoding)?;
        parse_binary(DataType::new(ty), &bytes)
    } else {
        parse_text(DataType::new(ty), &encoding.to_server(bytes)?, io)
    }
}

impl<S: Read + Write> Connection<'_, S> {
    pub(crate) fn parse(&mut self, body: &[u8]) -> PgResult<()> {
        let mut r = MsgReader::with_encoding(body, self.io.out.encoding);
        let name = r.cstr()?;
        let sql = r.cstr()?;
        let n = r.u16()? as usize;
        if n * 4 > r.remaining() {
            return Err(protocol_violation("insufficient data left in message"));
        }
        let param_types = (0..n).map(|_| r.u32()).collect::<PgResult<Vec<u32>>>()?;
        r.finish()?;
        if name.is_empty() {
            self.session.statements().remove("");
        }
        let stmt = self.session.prepare(&sql, &param_types)?;
        self.session
            .statements()
            .insert(name.as_ref(), stmt, false)?;
        self.io.out.parse_complete();
        Ok(())
    }

    pub(crate) fn bind(&mut self, body: &[u8]) -> PgResult<()> {
        let mut r = MsgReader::with_encoding(body, self.io.out.encoding);
        let portal_name = r.cstr()?;
        let stmt_name = r.cstr()?;
        let (portal_name, stmt_name) = (&*portal_name, &*stmt_name);
        let param_formats = read_format_codes(&mut r)?;
        let nparams = r.u16()? as usize;
        let mut raw = Vec::with_capacity(nparams.min(r.remaining() / 4));
        for _ in 0..nparams {
            let len = r.i32()?;
            raw.push(match len {
                -1 => None,
                len if len < 0 => {
                    return Err(protocol_violation("insufficient data left in message"))
                }
                len => Some(r.bytes(len as usize)?),
            });
        }
        let result_formats = read_format_codes(&mut r)?;
        r.finish()?;

        if portal_name.is_empty() {
            self.portals.remove("");
        } else if self.portals.contains_key(portal_name) {
            return Err(PgError::new(
                SqlState("42P03"),
                format!("portal \"{portal_name}\" already exists"),
            ));
        }
        let stmt = self
            .session
            .statements()
            .get(stmt_name)
            .cloned()
            .ok_or_else(|| no_statement(stmt_name))?;
        if param_formats.len() > 1 && param_formats.len() != nparams {
            return Err(PgError::new(
                SqlState::PROTOCOL_VIOLATION,
                format!(
                    "bind message has {} parameter formats but {nparams} parameters",
                    param_formats.len()
                ),
            ));
        }
        if nparams != stmt.param_types.len() {
            return Err(PgError::new(
                SqlState::PROTOCOL_VIOLATION,
                format!(
                    "bind message supplies {nparams} parameters, but prepared statement \
                     \"{stmt_name}\" requires {}",
                    stmt.param_types.len()
                ),
            ));
        }
        let mut params = Vec::with_capacity(nparams);
        let settings = self.session.io_settings();
        let encoding = self.io.out.encoding;
        for (i, (value, &oid)) in raw.iter().zip(&stmt.param_types).enumerate() {
            let binary = format_is_binary(&param_formats, i)?;
            params.push(match value {
                None => Value::Null,
                Some(bytes) => decode_param(oid, binary, bytes, i, &settings, encoding)?,
            });
        }
        let columns: &[ColumnDesc] = stmt.columns.as_deref().unwrap_or(&[]);
        if stmt.columns.is_some()
            && result_formats.len() > 1
            && result_formats.len() != columns.len()
        {
            return Err(PgError::new(
                SqlState::PROTOCOL_VIOLATION,
                format!(
                    "bind message has {} result formats but query has {} columns",
                    result_formats.len(),
                    columns.len()
                ),
            ));
        }
        let binary = (0..columns.len())
            .map(|i| format_is_binary(&result_formats, i))
            .collect::<PgResult<Vec<bool>>>()?;
        let fmts = ColFmt::for_columns(columns, |i| binary[i]);
        self.portals.insert(
            portal_name.to_string(),
            Portal {
                stmt,
                params,
                fmts,
                state: PortalState::Ready,
            },
        );
        self.io.out.bind_complete();
        Ok(())
    }

    pub(crate) fn describe(&mut self, body: &[u8]) -> PgResult<()> {
        let mut r = MsgReader::with_encoding(body, self.io.out.encoding);
        let kind = r.u8()?;
        let name = r.cstr()?;
        let name = &*name;
        r.finish()?;
        match kind {
            b'S' => {
                let stmt = self
                    .session
                    .statements()
                    .get(name)
                    .cloned()
                    .ok_or_else(|| no_statement(name))?;
                self.io.out.parameter_description(&stmt.param_types);
                match &stmt.columns {
                    Some(cols) => self.io.out.row_description(cols, |_| false)?,
                    None => self.io.out.no_data(),
                }
            }
            b'P' => {
                let Some(portal) = self.portals.get(name) else {
                    // A cursor DECLAREd in SQL is a portal too (psycopg
                    // describes its named cursors this way).
                    let cols = self
                        .session
                        .cursor_columns(name)
                        .ok_or_else(|| no_portal(name))?;
                    return self.io.out.row_description(&cols, |_| false);
                };
                match &portal.stmt.columns {
                    Some(cols) => {
                        let fmts = &portal.fmts;
                        self.io
                            .out
                            .row_description(cols, |i| fmts.get(i).is_some_and(|f| f.binary))?
                    }
                    None => self.io.out.no_data(),
                }
            }
            other => {
                return Err(PgError::new(
                    SqlState::PROTOCOL_VIOLATION,
                    format!("invalid DESCRIBE message subtype {other}"),
                ))
            }
        }
        Ok(())
    }

    pub(crate) fn close(&mut self, body: &[u8]) -> PgResult<()> {
        let mut r = MsgReader::with_encoding(body, self.io.out.encoding);
        let kind = r.u8()?;
        let name = r.cstr()?;
        let name = &*name;
        r.finish()?;
        match kind {
            b'S' => {
                self.session.statements().remove(name);
            }
            b'P' => {
                self.portals.remove(name);
            }
            other => {
                return Err(PgError::new(
                    SqlState::PROTOCOL_VIOLATION,
                    format!("invalid CLOSE message subtype {other}"),
                ))
            }
        }
        self.io.out.close_complete();
        Ok(())
    }

    pub(crate) fn execute(&mut self, body: &[u8]) -> PgResult<()> {
        let mut r = MsgReader::with_encoding(body, self.io.out.encoding);
        let name = r.cstr()?;
        let name = &*name;
        let max_rows = r.i32()?;
        r.finish()?;
        let limit = usize::try_from(max_rows).unwrap_or(0);
        let portal = self.portals.get_mut(name).ok_or_else(|| no_portal(name))?;
        if portal.stmt.sql.is_empty() && portal.stmt.columns.is_none() {
            self.io.out.empty_query();
            return Ok(());
        }
        match &mut portal.state {
            PortalState::Ready => {}
            PortalState::Streaming { cursor } => {
                self.interrupts.clear_cancel();
                let mut sink = ExecSink {
                    settings: self.session.io_settings(),
                    io: &mut *self.io,
                    fmts: &mut portal.fmts,
                    limit: 0,
                    sent: 0,
                    rest: VecDeque::new(),
                    tag: None,
                    names: None,
                };
                let result = self.session.fetch(cursor.as_mut(), &mut sink, limit);
                let ExecSink { tag, .. } = sink;
                if self.io.broken {
                    return Err(connection_lost());
                }
                match result {
                    Err(e) => {
                        self.portals.remove(name);
                        return Err(e);
                    }
                    Ok(true) => self.io.out.portal_suspended(),
                    Ok(false) => {
                        let tag = tag.unwrap_or_default();
                        self.io.out.command_complete(&tag);
                        portal.state = PortalState::Done { tag };
                    }
                }
                return Ok(());
            }
            PortalState::Suspended { rows, tag } => {
                let take = if limit == 0 {
                    rows.len()
                } else {
                    limit.min(rows.len())
                };
                let settings = self.session.io_settings();
                for row in rows.drain(..take) {
                    self.io.out.data_row(&row, &portal.fmts, &settings)?;
                    self.io.spill_if_needed();
                }
                if self.io.broken {
                    return Err(connection_lost());
                }
                if limit > 0 && take == limit {
                    self.io.out.portal_suspended();
                } else {
                    let tag = std::mem::take(tag);
                    self.io.out.command_complete(&batch_tag(&tag, take));
                    portal.state = PortalState::Done { tag };
                }
                return Ok(());
            }
            PortalState::Done { tag } => {
                if portal.stmt.columns.is_none() {
                    return Err(PgError::new(
                        SqlState("55000"),
                        format!("portal \"{name}\" cannot be run"),
                    ));
                }
                self.io.out.command_complete(&batch_tag(tag, 0));
                return Ok(());
            }
        }

        self.interrupts.clear_cancel();
        let stmt = portal.stmt.clone();
        let mut sink = ExecSink {
            settings: self.session.io_settings(),
            io: &mut *self.io,
            fmts: &mut portal.fmts,
            limit,
            sent: 0,
            rest: VecDeque::new(),
            tag: None,
            names: None,
        };
        let result = self
            .session
            .execute_portal(&stmt, &portal.params, &mut sink, limit);
        let ExecSink {
            sent, rest, tag, ..
        } = sink;
        if self.io.broken {
            return Err(connection_lost());
        }
        let cursor = match result {
            Ok(cursor) => cursor,
            Err(e) => {
                self.portals.remove(name);
                return Err(e);
            }
        };
        if let Some(cursor) = cursor {
            self.io.out.portal_suspended();
            portal.state = PortalState::Streaming { cursor };
            return Ok(());
        }
        let tag = tag.unwrap_or_default();
        if limit > 0 && sent == limit {
            self.io.out.portal_suspended();
            portal.state = PortalState::Suspended { rows: rest, tag };
        } else {
            self.io.out.command_complete(&tag);
            portal.state = PortalState::Done { tag };
        }
        Ok(())
    }
}

/// Receives a portal's rows: sends up to `limit` (0: all) and keeps the rest
/// for later Execute messages. The tag is held back until the outcome
/// (CommandComplete or PortalSuspended) is known.
struct ExecSink<'c, S: Read + Write> {
    /// The session's settings rows are written with.
    settings: IoSettings,
    io: &'c mut Conn<S>,
    fmts: &'c mut Vec<ColFmt>,
    limit: usize,
    sent: usize,
    rest: VecDeque<Vec<Value>>,
    tag: Option<String>,
    /// Prints reg* columns as names.
    names: Option<std::sync::Arc<dyn crate::session_api::RegOutput>>,
}

impl<S: Read + Write> ResultSink for ExecSink<'_, S> {
    fn columns(&mut self, columns: &[ColumnDesc]) -> PgResult<()> {
        // No RowDescription in Execute; only pick up the actual types.
        for (i, c) in columns.iter().enumerate() {
            let ty = TypeId::from_oid(c.type_oid);
            match self.fmts.get_mut(i) {
                Some(f) => f.ty = ty.or(f.ty),
                None => self.fmts.push(ColFmt { ty, binary: false }),
            }
        }
        Ok(())
    }

    fn row(&mut self, row: &[Value]) -> PgResult<()> {
        let fmts = &*self.fmts;
        let row = &*crate::session_api::with_reg_names(
            row,
            |i| fmts.get(i).and_then(|f| Some((f.ty?, f.binary))),
            self.names.as_deref(),
        );
        if self.limit == 0 || self.sent < self.limit {
            self.io.out.data_row(row, self.fmts, &self.settings)?;
            self.sent += 1;
            self.io.check_sink()
        } else {
            self.rest.push_back(row.to_vec());
            Ok(())
        }
    }

    fn complete(&mut self, tag: &str) -> PgResult<()> {
        self.tag = Some(tag.to_string());
        Ok(())
    }

    fn notice(&mut self, notice: &PgError) -> PgResult<()> {
        self.io.out.notice(notice);
        self.io.flush();
        self.io.check_sink()
    }

    fn output_settings(&mut self, io: &IoSettings) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_and_formats() {
        assert_eq!(batch_tag("SELECT 10", 3), "SELECT 3");
        assert_eq!(batch_tag("INSERT 0 10", 3), "INSERT 0 10");
        assert!(!format_is_binary(&[], 3).unwrap());
        assert!(format_is_binary(&[1], 3).unwrap());
        assert!(format_is_binary(&[0, 1], 1).unwrap());
        assert_eq!(
            format_is_binary(&[2], 0).unwrap_err().message,
            "unsupported format code: 2"
        );
    }
}
