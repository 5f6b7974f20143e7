//! Running COPY in a session: data from the client (CopyData) or a server
//! file goes through `exec::copy`'s parser and batched loader; COPY TO runs
//! its plan and writes each row in the COPY format to the client or a file.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use common::{PgError, PgResult, SqlState};
use exec::copy::{format_header, format_row, CopyLoader, CopyParser};
use exec::ExecEnv;
use sql::copy::{CopyEndpoint, CopyHeader};
use sql::plan::{CopyFromTarget, CopyToSource};

use crate::protocol::encoding::Decoder;
use crate::protocol::ClientEncoding;
use crate::session_api::ResultSink;

/// Rows between interrupt checks while unloading.
const ROWS_PER_CHECK: u64 = 256;
const FILE_CHUNK: usize = 64 * 1024;

fn file_path(data_dir: &Path, name: &str) -> PathBuf {
    let p = Path::new(name);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        // As PostgreSQL: relative to the server's working directory, which
        // for it is the data directory.
        data_dir.join(p)
    }
}

fn file_error(name: &str, reading: bool, e: std::io::Error) -> PgError {
    let code = if e.kind() == std::io::ErrorKind::NotFound {
        SqlState::UNDEFINED_FILE_OR_OBJECT
    } else {
        SqlState::IO_ERROR
    };
    let what = if reading { "reading" } else { "writing" };
    // The OS's words without Rust's "(os error N)", as PostgreSQL prints them.
    let os = e.to_string();
    let os = os.split(" (os error").next().unwrap_or_default();
    PgError::new(
        code,
        format!("could not open file \"{name}\" for {what}: {os}"),
    )
}

/// The conversion a server file needs: ENCODING other than UTF8.
fn file_encoding(options: &sql::copy::CopyOptions) -> PgResult<Option<ClientEncoding>> {
    match options.encoding {
        None => Ok(None),
        Some(e) => {
            let encoding = ClientEncoding::new(e)?;
            Ok((!encoding.is_utf8()).then_some(encoding))
        }
    }
}

/// COPY table FROM STDIN or a file.
pub(crate) fn copy_from(
    target: &CopyFromTarget,
    sink: &mut dyn ResultSink,
    env: &mut ExecEnv,
    data_dir: &Path,
    in_block: bool,
) -> PgResult<()> {
    let mut parser = CopyParser::new(&target.options);
    let mut loader = CopyLoader::new(target, env)?;
    let mut chunk = Vec::with_capacity(FILE_CHUNK);
    match &target.endpoint {
        CopyEndpoint::Client => {
            sink.copy_in_start(target.columns.len(), target.options.encoding)?;
            // Read to CopyDone even after `\.`, as the protocol requires.
            while sink
                .copy_in_next(&mut chunk)
                .map_err(|e| conversion_context(e, &parser, &chunk, target))?
            {
                env.check_cancel()?;
                parser.push(&chunk)?;
                drain(&mut parser, &mut loader, env, false, target)?;
            }
        }
        CopyEndpoint::File(name) => {
            // A file is in the server encoding unless ENCODING says otherwise.
            let mut decoder = file_encoding(&target.options)?.map(Decoder::new);
            let mut text = String::new();
            let mut f = File::open(file_path(data_dir, name)).map_err(|e| {
                file_error(name, true, e).with_hint(
                    "COPY FROM instructs the PostgreSQL server process to read a file. You may \
                     want a client-side facility such as psql's \\copy.",
                )
            })?;
            loop {
                chunk.resize(FILE_CHUNK, 0);
                let n = f.read(&mut chunk).map_err(|e| {
                    PgError::io(format!("could not read from COPY file \"{name}\""), e)
                })?;
                if n == 0 {
                    if let Some(decoder) = &mut decoder {
                        // A character cut off at the end of the file is invalid.
                        decoder.decode(&[], true, &mut String::new())?;
                    }
                    break;
                }
                // A file can be endless (a FIFO, /dev/zero): cancel and
                // statement_timeout reach this loop.
                env.check_cancel()?;
                match &mut decoder {
                    None => parser.push(&chunk[..n])?,
                    Some(decoder) => {
                        text.clear();
                        if let Err(e) = decoder.decode(&chunk[..n], false, &mut text) {
                            let before = &chunk[..decoder.failed_at()];
                            return Err(conversion_context(e.into(), &parser, before, target));
                        }
                        parser.push(text.as_bytes())?;
                    }
                }
                drain(&mut parser, &mut loader, env, false, target)?;
            }
        }
        CopyEndpoint::Program(_) => {
            return Err(PgError::unsupported("COPY FROM PROGRAM is not supported"))
        }
    }
    drain(&mut parser, &mut loader, env, true, target)?;
    loader.flush(env)?;
    loader.finish(env)?;
    if !in_block {
        exec::ri::fire_statement_deferred(env)?;
    }
    sink.complete(&format!("COPY {}", loader.rows))
}

/// A conversion error in COPY data gets PostgreSQL's CONTEXT: the line it
/// is on, counted from the parser's next line through `before`, the data
/// that came before the bad bytes.
fn conversion_context(
    e: PgError,
    parser: &CopyParser,
    before: &[u8],
    target: &CopyFromTarget,
) -> PgError {
    if e.code != SqlState("22021") && e.code != SqlState("22P05") {
        return e;
    }
    let line = parser.line + before.iter().filter(|&&b| b == b'\n').count() as u64;
    e.with_context(format!("COPY {}, line {line}", target.table.name))
}

/// Loads every complete record the parser holds.
fn drain(
    parser: &mut CopyParser,
    loader: &mut CopyLoader<'_>,
    env: &mut ExecEnv,
    at_eof: bool,
    target: &CopyFromTarget,
) -> PgResult<()> {
    loop {
        let line = parser.line;
        let next = parser.next_record(at_eof).map_err(|e| {
            let raw = parser.last_line();
            e.with_context(format!(
                "COPY {}, line {line}: \"{raw}\"",
                target.table.name
            ))
        })?;
        let Some((record, is_header)) = next else {
            return Ok(());
        };
        if is_header {
            loader.check_header(&record).map_err(|e| {
                let raw = parser.last_line();
                e.with_context(format!(
                    "COPY {}, line {line}: \"{raw}\"",
                    target.table.name
                ))
            })?;
            continue;
        }
        loader.add_record(record, line, parser, env)?;
    }
}

/// COPY table|(query) TO STDOUT or a file.
pub(crate) fn copy_to(
    source: &CopyToSource,
    sink: &mut dyn ResultSink,
    env: &mut ExecEnv,
    data_dir: &Path,
) -> PgResult<()> {
    let mut file = match &source.endpoint {
        CopyEndpoint::Client => {
            sink.copy_out_start(source.columns.len(), source.options.encoding)?;
            None
        }
        CopyEndpoint::File(name) => {
            if !Path::new(name).is_absolute() {
                return Err(PgError::new(
                    SqlState::INVALID_NAME,
                    "relative path not allowed for COPY to file",
                ));
            }
            Some((
                File::create(file_path(data_dir, name)).map_err(|e| file_error(name, false, e))?,
                name.as_str(),
            ))
        }
        CopyEndpoint::Program(_) => {
            return Err(PgError::unsupported("COPY TO PROGRAM is not supported"))
        }
    };
    let types: Vec<_> = source.columns.iter().map(|c| c.ty).collect();
    let (mut buf, mut scratch) = (Vec::new(), String::new());
    let to_file_encoding = match &file {
        Some(_) => file_encoding(&source.options)?,
        None => None,
    };
    let mut converted = Vec::new();
    let mut emit = |buf: &mut Vec<u8>, sink: &mut dyn ResultSink, last: bool| -> PgResult<()> {
        match &mut file {
            None => {
                if !buf.is_empty() {
                    sink.copy_out_data(buf)?;
                }
                buf.clear();
            }
            Some((f, name)) if last || buf.len() >= FILE_CHUNK => {
                let bytes = match to_file_encoding {
                    None => &buf[..],
                    Some(encoding) => {
                        converted.clear();
                        let text = std::str::from_utf8(buf).unwrap_or_default();
                        encoding.encode_into(text, &mut converted)?;
                        &converted[..]
                    }
                };
                f.write_all(bytes).map_err(|e| {
                    PgError::io(format!("could not write to COPY file \"{name}\""), e)
                })?;
                buf.clear();
            }
            Some(_) => {}
        }
        Ok(())
    };
    if source.options.header != CopyHeader::None {
        let names: Vec<String> = source.columns.iter().map(|c| c.name.clone()).collect();
        format_header(&names, &source.options, &mut buf);
        emit(&mut buf, sink, false)?;
    }
    let mut op = exec::build(&source.plan, env, None)?;
    let mut n = 0u64;
    while let Some(row) = op.next(env)? {
        format_row(
            &row,
            &types,
            &source.options,
            &source.force_quote,
            &env.io,
            &mut scratch,
            &mut buf,
        );
        emit(&mut buf, sink, false)?;
        n += 1;
        if n.is_multiple_of(ROWS_PER_CHECK) {
            env.check_cancel()?;
        }
    }
    emit(&mut buf, sink, true)?;
    if file.is_none() {
        sink.copy_out_done()?;
    }
    sink.complete(&format!("COPY {n}"))
}
