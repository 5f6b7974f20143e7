//! Settings (GUCs) with PostgreSQL's names, defaults and contexts.

use std::collections::BTreeMap;

use common::{PgError, PgResult, SqlState};
use types::datestyle::DateStyle;

pub use crate::gucs_typed::{
    exec_settings, io_settings, lock_settings, planner_settings, predicate_lock_limits,
    procarray_group_clear,
};

pub use crate::gucs_defs::{GucContext, GucDef, GUCS, SERVER_VERSION};

pub fn lookup(name: &str) -> Option<&'static GucDef> {
    // Older names PostgreSQL users still write: 9.6's max_parallel_degree
    // and 15's force_parallel_mode.
    let name = if name.eq_ignore_ascii_case("max_parallel_degree") {
        "max_parallel_workers_per_gather"
    } else if name.eq_ignore_ascii_case("force_parallel_mode") {
        "debug_parallel_query"
    } else {
        name
    };
    // Looked up on every statement (search_path, TimeZone, timeouts): a
    // hash of the lowercased names instead of a walk over every setting.
    static BY_NAME: std::sync::LazyLock<std::collections::HashMap<String, &'static GucDef>> =
        std::sync::LazyLock::new(|| {
            GUCS.iter()
                .map(|d| (d.name.to_ascii_lowercase(), d))
                .collect()
        });
    if name.bytes().any(|b| b.is_ascii_uppercase()) {
        BY_NAME.get(&name.to_ascii_lowercase()).copied()
    } else {
        BY_NAME.get(name).copied()
    }
}

fn unrecognized(name: &str) -> PgError {
    PgError::new(
        SqlState::UNDEFINED_OBJECT,
        format!("unrecognized configuration parameter \"{name}\""),
    )
}

/// A set of setting values (server-wide or one session's).
#[derive(Debug, Clone, Default)]
pub struct Settings {
    values: BTreeMap<&'static str, String>,
    /// Changes with every change of a value (unique across all sets), so a
    /// consumer can cache what it parsed from them.
    generation: u64,
}

static SETTINGS_GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn next_generation() -> u64 {
    SETTINGS_GENERATION.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Settings {
    pub fn defaults() -> Self {
        Settings {
            values: GUCS
                .iter()
                .map(|d| (d.name, d.default.to_string()))
                .collect(),
            generation: next_generation(),
        }
    }

    pub fn get(&self, name: &str) -> PgResult<&str> {
        let def = lookup(name).ok_or_else(|| unrecognized(name))?;
        Ok(self
            .values
            .get(def.name)
            .map(String::as_str)
            .unwrap_or(def.default))
    }

    /// Sets from a config file or the command line (any context but Internal).
    pub fn set_startup(&mut self, name: &str, value: &str) -> PgResult<()> {
        let def = lookup(name).ok_or_else(|| unrecognized(name))?;
        let v = self.checked_value(def, value, None)?;
        self.values.insert(def.name, v);
        self.generation = next_generation();
        Ok(())
    }

    /// Takes a setting the configuration files changed on reload (`value`
    /// already validated there).
    fn set_reloaded(&mut self, name: &'static str, value: &str) {
        self.values.insert(name, value.to_string());
        self.generation = next_generation();
    }

    /// After a reload: takes the files' new values of the sighup settings,
    /// and of the user settings this session has not changed from `old`
    /// (the files' values it started from). Postmaster settings wait for a
    /// restart.
    pub fn absorb_reload(&mut self, old: &Settings, new: &Settings) {
        for def in GUCS {
            let (Ok(was), Ok(now)) = (old.get(def.name), new.get(def.name)) else {
                continue;
            };
            if was == now {
                continue;
            }
            let take = match def.context {
                GucContext::Sighup => true,
                GucContext::User | GucContext::Superuser => {
                    self.get(def.name).is_ok_and(|v| v == was)
                }
                GucContext::Postmaster | GucContext::Internal => false,
            };
            if take {
                self.set_reloaded(def.name, now);
            }
        }
    }

    /// SET by a session (`superuser`: whether its role is one). Returns the
    /// canonical name.
    pub fn set_user(
        &mut self,
        name: &str,
        value: Option<&str>,
        defaults: &Settings,
        superuser: bool,
    ) -> PgResult<&'static str> {
        let def = lookup(name).ok_or_else(|| unrecognized(name))?;
        match def.context {
            GucContext::Postmaster => {
                return Err(PgError::new(
                    SqlState::CANT_CHANGE_RUNTIME_PARAM,
                    format!(
                        "parameter \"{}\" cannot be changed without restarting the server",
                        def.name
                    ),
                ))
            }
            GucContext::Internal => {
                return Err(PgError::new(
                    SqlState::CANT_CHANGE_RUNTIME_PARAM,
                    format!("parameter \"{}\" cannot be changed", def.name),
                ))
            }
            GucContext::Sighup => {
                return Err(PgError::new(
                    SqlState::CANT_CHANGE_RUNTIME_PARAM,
                    format!("parameter \"{}\" cannot be changed now", def.name),
                ))
            }
            GucContext::Superuser if !superuser => {
                return Err(PgError::new(
                    SqlState::INSUFFICIENT_PRIVILEGE,
                    format!("permission denied to set parameter \"{}\"", def.name),
                ))
            }
            GucContext::Superuser | GucContext::User => {}
        }
        let v = match value {
            Some(v) => self.checked_value(def, v, Some(defaults))?,
            None => defaults.get(def.name)?.to_string(),
        };
        self.values.insert(def.name, v);
        self.generation = next_generation();
        Ok(def.name)
    }

    /// A new value validated and in the form SHOW reports. DateStyle reads
    /// against the current value (a value naming only the output format
    /// keeps the field order) and `reset` (its DEFAULT key word; the
    /// built-in default without one).
    fn checked_value(
        &self,
        def: &GucDef,
        value: &str,
        reset: Option<&Settings>,
    ) -> PgResult<String> {
        if def.name == "DateStyle" {
            let style = |s: &Settings| {
                s.get(def.name)
                    .ok()
                    .and_then(|v| {
                        DateStyle::parse_setting(v, DateStyle::ISO_MDY, DateStyle::ISO_MDY).ok()
                    })
                    .unwrap_or_default()
            };
            let reset = reset.map_or(DateStyle::ISO_MDY, style);
            return DateStyle::parse_setting(value, style(self), reset)
                .map(DateStyle::canonical_name)
                .map_err(|detail| invalid_value(def, value).with_detail(detail));
        }
        validate(def, value)?;
        Ok(canonical_value(def, value))
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Takes `name`'s value from `other` (a transaction's plain SET, kept
    /// past a SET LOCAL of the same setting).
    pub fn copy_value(&mut self, other: &Settings, name: &'static str) {
        if let Some(v) = other.values.get(name) {
            self.values.insert(name, v.clone());
            self.generation = next_generation();
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &str)> {
        self.values.iter().map(|(k, v)| (*k, v.as_str()))
    }
}

/// The value as SHOW reports it after it was set (PostgreSQL's check hooks
/// canonicalise some settings).
fn canonical_value(def: &GucDef, value: &str) -> String {
    match def.name {
        "default_transaction_isolation" | "transaction_isolation" => {
            txn::IsolationLevel::parse(value)
                .map(|l| l.name().to_string())
                .unwrap_or_else(|| value.to_string())
        }
        "default_transaction_read_only"
        | "default_transaction_deferrable"
        | "transaction_read_only"
        | "transaction_deferrable" => match parse_bool(value) {
            Some(true) => "on".into(),
            Some(false) => "off".into(),
            None => value.to_string(),
        },
        "bytea_output" | "default_toast_compression" => value.to_ascii_lowercase(),
        "client_encoding" => client_encoding(value)
            .map(|e| e.encoding().name().to_string())
            .unwrap_or_else(|_| value.to_string()),
        "TimeZone" => types::datetime::TimeZone::parse(value)
            .map(|tz| tz.canonical_name(value))
            .unwrap_or_else(|| value.to_string()),
        _ => value.to_string(),
    }
}

/// 22023 "invalid value for parameter ...".
fn invalid_value(def: &GucDef, value: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_PARAMETER_VALUE,
        format!("invalid value for parameter \"{}\": \"{value}\"", def.name),
    )
}

/// A client_encoding value typed: a name PostgreSQL knows (any case and
/// punctuation, aliases too) of an encoding converted here; else 22023, or
/// 0A000 with PostgreSQL's detail for one it knows that is not converted.
pub fn client_encoding(value: &str) -> PgResult<crate::protocol::ClientEncoding> {
    let invalid = |code| {
        PgError::new(
            code,
            format!("invalid value for parameter \"client_encoding\": \"{value}\""),
        )
    };
    let encoding = types::encoding::PgEncoding::from_name(value)
        .ok_or_else(|| invalid(SqlState::INVALID_PARAMETER_VALUE))?;
    crate::protocol::ClientEncoding::new(encoding).map_err(|_| {
        invalid(SqlState::FEATURE_NOT_SUPPORTED).with_detail(format!(
            "Conversion between {} and UTF8 is not supported.",
            encoding.name()
        ))
    })
}

fn validate(def: &GucDef, value: &str) -> PgResult<()> {
    let bad = || invalid_value(def, value);
    match def.name {
        "DateStyle" => {
            DateStyle::parse_setting(value, DateStyle::ISO_MDY, DateStyle::ISO_MDY)
                .map_err(|detail| bad().with_detail(detail))?;
        }
        "default_transaction_isolation" | "transaction_isolation" => {
            txn::IsolationLevel::parse(value).ok_or_else(bad)?;
        }
        "default_transaction_read_only"
        | "default_transaction_deferrable"
        | "transaction_read_only"
        | "transaction_deferrable"
        | "procarray_group_clear"
        | "check_function_bodies" => {
            parse_bool(value).ok_or_else(bad)?;
        }
        "xmloption"
            if !["content", "document"].contains(&value.trim().to_ascii_lowercase().as_str()) =>
        {
            return Err(bad().with_hint("Available values: content, document."));
        }
        "default_tablespace"
            if !["", "pg_default"].contains(&value.trim().to_ascii_lowercase().as_str()) =>
        {
            return Err(PgError::new(
                SqlState::UNDEFINED_OBJECT,
                format!("tablespace \"{value}\" does not exist"),
            ));
        }
        "default_table_access_method" if !value.trim().eq_ignore_ascii_case("heap") => {
            return Err(PgError::new(
                SqlState::UNDEFINED_OBJECT,
                format!("table access method \"{value}\" does not exist"),
            ));
        }
        "port"
        | "max_pred_locks_per_transaction"
        | "max_pred_locks_per_relation"
        | "max_pred_locks_per_page"
        | "max_connections"
        | "bgwriter_lru_maxpages"
        | "max_parallel_workers_per_gather"
        | "max_parallel_workers"
        | "max_parallel_maintenance_workers"
        | "max_worker_processes"
        | "superuser_reserved_connections"
        | "tcp_keepalives_count"
        | "extra_float_digits" => {
            value.trim().parse::<i64>().map_err(|_| bad())?;
        }
        "shared_buffers"
        | "work_mem"
        | "maintenance_work_mem"
        | "max_wal_size"
        | "min_wal_size" => {
            parse_memory_kb(value).ok_or_else(bad)?;
        }
        "min_parallel_table_scan_size" | "min_parallel_index_scan_size" => {
            parse_memory_kb_unit(value, 8).ok_or_else(bad)?;
        }
        "debug_parallel_query" => {
            let v = value.trim().to_ascii_lowercase();
            if v != "regress" && parse_bool(&v).is_none() {
                return Err(bad().with_hint("Available values: off, on, regress."));
            }
        }
        "wal_buffers" if value.trim() != "-1" => {
            parse_memory_kb_unit(value, 8).ok_or_else(bad)?;
        }
        "commit_delay" | "commit_siblings" => {
            let n: i64 = value.trim().parse().map_err(|_| bad())?;
            let hi = if def.name == "commit_delay" {
                100_000
            } else {
                1000
            };
            if !(0..=hi).contains(&n) {
                return Err(out_of_range(def.name, value, "0", &hi.to_string()));
            }
        }
        "autovacuum" | "track_counts" => {
            parse_bool(value).ok_or_else(bad)?;
        }
        "autovacuum_naptime" => {
            let ms = parse_duration_ms(value, 1000).ok_or_else(bad)?;
            if !(1000..=2_147_483_000).contains(&ms) {
                return Err(out_of_range(def.name, value, "1", "2147483"));
            }
        }
        "log_autovacuum_min_duration" if value.trim() != "-1" => {
            parse_duration_ms(value, 1).ok_or_else(bad)?;
        }
        "autovacuum_max_workers"
        | "autovacuum_vacuum_threshold"
        | "autovacuum_vacuum_insert_threshold"
        | "autovacuum_analyze_threshold" => {
            let n: i64 = value.trim().parse().map_err(|_| bad())?;
            let lo = match def.name {
                "autovacuum_max_workers" => 1,
                "autovacuum_vacuum_insert_threshold" => -1,
                _ => 0,
            };
            let hi = if lo == 1 { 262_143 } else { i32::MAX as i64 };
            if !(lo..=hi).contains(&n) {
                return Err(out_of_range(
                    def.name,
                    value,
                    &lo.to_string(),
                    &hi.to_string(),
                ));
            }
        }
        "autovacuum_vacuum_scale_factor"
        | "autovacuum_vacuum_insert_scale_factor"
        | "autovacuum_analyze_scale_factor" => {
            let f: f64 = value.trim().parse().map_err(|_| bad())?;
            if !(0.0..=100.0).contains(&f) {
                return Err(out_of_range(def.name, value, "0", "100"));
            }
        }
        "checkpoint_completion_target" => {
            let m: f64 = value.trim().parse().map_err(|_| bad())?;
            if !(0.0..=1.0).contains(&m) {
                return Err(out_of_range(def.name, value, "0", "1"));
            }
        }
        "wal_sync_method" if wal::SyncMethod::parse(value.trim()).is_none() => {
            return Err(
                bad().with_hint("Available values: fsync, fdatasync, open_sync, open_datasync.")
            );
        }
        "synchronous_commit" if txn::SyncCommit::parse(value.trim()).is_none() => {
            return Err(
                bad().with_hint("Available values: local, remote_write, remote_apply, on, off.")
            );
        }
        "max_stack_depth" => {
            let kb = max_stack_depth_kb(value).ok_or_else(bad)?;
            let max = common::stack_depth::MAX_STACK_DEPTH_KB;
            if kb < 100 {
                return Err(PgError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!(
                        "{kb} kB is outside the valid range for parameter \"max_stack_depth\" (100 kB .. {max} kB)"
                    ),
                ));
            }
            if kb > max {
                return Err(PgError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!("\"max_stack_depth\" must not exceed {max}kB."),
                )
                .with_hint(
                    "Increase the platform's stack depth limit via \"ulimit -s\" or local equivalent.",
                ));
            }
        }
        "bgwriter_delay"
        | "statement_timeout"
        | "lock_timeout"
        | "client_connection_check_interval"
        | "wal_writer_delay" => {
            parse_duration_ms(value, 1).ok_or_else(bad)?;
        }
        "idle_in_transaction_session_timeout"
            if parse_duration_ms(value, 1).ok_or_else(bad)? != 0 =>
        {
            return Err(PgError::unsupported(
                "idle_in_transaction_session_timeout is not supported yet; only 0 (off) is accepted",
            ));
        }
        "idle_in_transaction_session_timeout" => {}
        "deadlock_timeout" if parse_duration_ms(value, 1).ok_or_else(bad)? == 0 => {
            return Err(out_of_range(def.name, value, "1", "2147483647"));
        }
        "deadlock_timeout" => {}
        "checkpoint_timeout"
        | "authentication_timeout"
        | "tcp_keepalives_idle"
        | "tcp_keepalives_interval" => {
            parse_duration_ms(value, 1000).ok_or_else(bad)?;
        }
        "hash_mem_multiplier" => {
            let m: f64 = value.trim().parse().map_err(|_| bad())?;
            if !(1.0..=1000.0).contains(&m) {
                return Err(out_of_range(def.name, value, "1", "1000"));
            }
        }
        "temp_file_limit" if value.trim() != "-1" => {
            parse_memory_kb_unit(value, 1).ok_or_else(bad)?;
        }
        "bgwriter_lru_multiplier" => {
            let m: f64 = value.trim().parse().map_err(|_| bad())?;
            if !(0.0..=10.0).contains(&m) {
                return Err(bad());
            }
        }
        "ssl_min_protocol_version" if crate::tls::TlsVersion::parse(value).is_none() => {
            return Err(bad().with_hint("Available values: TLSv1, TLSv1.1, TLSv1.2, TLSv1.3."))
        }
        "ssl_max_protocol_version"
            if !value.trim().is_empty() && crate::tls::TlsVersion::parse(value).is_none() =>
        {
            return Err(bad().with_hint("Available values: , TLSv1, TLSv1.1, TLSv1.2, TLSv1.3."))
        }
        "debug_buffer_victim_lock"
        | "debug_buffer_lock_free_lookup"
        | "fsync"
        | "full_page_writes"
        | "parallel_leader_participation"
        | "ssl" => {
            parse_bool(value).ok_or_else(bad)?;
        }
        n if n.starts_with("enable_") => {
            parse_bool(value).ok_or_else(bad)?;
        }
        "cpu_index_tuple_cost"
        | "cpu_operator_cost"
        | "cpu_tuple_cost"
        | "random_page_cost"
        | "parallel_setup_cost"
        | "parallel_tuple_cost"
        | "seq_page_cost" => {
            let c: f64 = value.trim().parse().map_err(|_| bad())?;
            if !(0.0..=1.0e10).contains(&c) {
                return Err(out_of_range(def.name, value, "0", "1.79769e+308"));
            }
        }
        "join_collapse_limit" | "from_collapse_limit" | "default_statistics_target" => {
            let n: i64 = value.trim().parse().map_err(|_| bad())?;
            let (lo, hi) = if def.name == "default_statistics_target" {
                (1, 10000)
            } else {
                (1, i32::MAX as i64)
            };
            if !(lo..=hi).contains(&n) {
                return Err(out_of_range(
                    def.name,
                    value,
                    &lo.to_string(),
                    &hi.to_string(),
                ));
            }
        }
        "effective_cache_size" => {
            parse_memory_kb_unit(value, 8).ok_or_else(bad)?;
        }
        "io_method" if value != "worker" && value != "sync" => return Err(bad()),
        "plan_cache_mode" if sql::plan::PlanCacheMode::parse(value).is_none() => {
            return Err(
                bad().with_hint("Available values: auto, force_generic_plan, force_custom_plan.")
            )
        }
        "password_encryption"
            if crate::auth::password::PasswordEncryption::parse(value).is_none() =>
        {
            return Err(bad())
        }
        "TimeZone" if types::datetime::TimeZone::parse(value).is_none() => return Err(bad()),
        "bytea_output" if types::bytea::ByteaOutput::parse(value).is_none() => {
            return Err(bad().with_hint("Available values: escape, hex."))
        }
        "default_toast_compression"
            if access::toast::Compression::from_name(value.trim()).is_none() =>
        {
            return Err(bad().with_hint("Available values: pglz, lz4."))
        }
        "client_encoding" => {
            client_encoding(value)?;
        }
        _ => {}
    }
    Ok(())
}

fn out_of_range(name: &str, value: &str, lo: &str, hi: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_PARAMETER_VALUE,
        format!("{value} is outside the valid range for parameter \"{name}\" ({lo} .. {hi})"),
    )
}

/// Parses a time setting ("200ms", "1s", "5min"; bare numbers in `default_unit_ms`).
pub fn parse_duration_ms(value: &str, default_unit_ms: u64) -> Option<u64> {
    let v = value.trim();
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: u64 = num.parse().ok()?;
    let mult = match unit.trim() {
        "" => default_unit_ms,
        "ms" => 1,
        "s" => 1000,
        "min" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return None,
    };
    Some(n * mult)
}

pub fn parse_bool(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" | "t" | "y" => Some(true),
        "off" | "false" | "no" | "0" | "f" | "n" => Some(false),
        _ => None,
    }
}

/// max_stack_depth in kB (a bare number is kB, as PostgreSQL reads it).
pub fn max_stack_depth_kb(value: &str) -> Option<u64> {
    let v = value.trim();
    if v.chars().all(|c| c.is_ascii_digit()) {
        v.parse().ok()
    } else {
        parse_memory_kb(v)
    }
}

/// Parses a memory setting ("128MB", "16384" = 8kB pages for shared_buffers
/// is handled by the caller) into kilobytes.
pub fn parse_memory_kb(value: &str) -> Option<u64> {
    parse_memory_kb_unit(value, 8)
}

/// Parses a memory setting whose bare numbers are in units of `unit_kb` kB.
pub fn parse_memory_kb_unit(value: &str, unit_kb: u64) -> Option<u64> {
    let v = value.trim();
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: u64 = num.parse().ok()?;
    let mult = match unit.trim() {
        "" => unit_kb,
        "B" => return Some(n / 1024),
        "kB" => 1,
        "MB" => 1024,
        "GB" => 1024 * 1024,
        "TB" => 1024 * 1024 * 1024,
        _ => return None,
    };
    Some(n * mult)
}

/// ALTER SYSTEM's file in the data directory, read after postgresql.conf.
pub const AUTO_CONF: &str = "postgresql.auto.conf";

/// ALTER SYSTEM: validates the setting and rewrites postgresql.auto.conf
/// (a new file written, synced and renamed over the old one, as PostgreSQL
/// does). `name` None resets all; `value` None removes the setting.
pub fn alter_system(
    dir: &std::path::Path,
    name: Option<&str>,
    value: Option<&str>,
) -> PgResult<()> {
    let path = dir.join(AUTO_CONF);
    let mut entries = std::fs::read_to_string(&path)
        .map(|t| config_entries(&t))
        .unwrap_or_default();
    match name {
        None => entries.clear(),
        Some(name) => {
            let def = lookup(name).ok_or_else(|| unrecognized(name))?;
            if def.context == GucContext::Internal {
                return Err(PgError::new(
                    SqlState::CANT_CHANGE_RUNTIME_PARAM,
                    format!("parameter \"{}\" cannot be changed", def.name),
                ));
            }
            entries.retain(|(k, _)| !k.eq_ignore_ascii_case(def.name));
            if let Some(v) = value {
                validate(def, v)?;
                entries.push((def.name.to_string(), v.to_string()));
            }
        }
    }
    let mut text = String::from(
        "# Do not edit this file manually!\n# It will be overwritten by the ALTER SYSTEM command.\n",
    );
    for (k, v) in &entries {
        text.push_str(&format!("{k} = '{}'\n", v.replace('\'', "''")));
    }
    let io = |e: std::io::Error| {
        PgError::new(
            SqlState::IO_ERROR,
            format!("could not write file \"{}\": {e}", path.display()),
        )
    };
    let tmp = dir.join(format!("{AUTO_CONF}.tmp"));
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp).map_err(io)?;
        f.write_all(text.as_bytes()).map_err(io)?;
        f.sync_all().map_err(io)?;
    }
    std::fs::rename(&tmp, &path).map_err(io)?;
    Ok(())
}

/// Reads `name = value` lines of a postgresql.conf.
pub fn read_config_file(path: &std::path::Path, settings: &mut Settings) -> PgResult<()> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(());
    };
    for (k, v) in config_entries(&text) {
        settings
            .set_startup(&k, &v)
            .map_err(|e| PgError::new(e.code, format!("{} (in {})", e.message, path.display())))?;
    }
    Ok(())
}

/// The `name = value` (or `name value`) lines of a configuration file, in
/// order, comments dropped; a quoted value loses its quotes and has its
/// doubled quotes undone.
fn config_entries(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let Some((k, v)) = line.split_once('=').or_else(|| line.split_once(' ')) else {
            continue;
        };
        let v = v.trim();
        let v = match v.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')) {
            Some(inner) => inner.replace("''", "'"),
            None => v.to_string(),
        };
        out.push((k.trim().to_string(), v));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_entries_undo_what_alter_system_writes() {
        let text = "# header\nwork_mem = '8MB'\napplication_name = 'it''s'  # note\nport 5433\n\n";
        assert_eq!(
            config_entries(text),
            vec![
                ("work_mem".to_string(), "8MB".to_string()),
                ("application_name".to_string(), "it's".to_string()),
                ("port".to_string(), "5433".to_string()),
            ]
        );
    }

    #[test]
    fn superuser_settings_need_a_superuser() {
        let base = Settings::defaults();
        let mut s = base.clone();
        let err = s
            .set_user("max_stack_depth", Some("1MB"), &base, false)
            .unwrap_err();
        assert_eq!(err.code, SqlState::INSUFFICIENT_PRIVILEGE);
        assert_eq!(
            err.message,
            "permission denied to set parameter \"max_stack_depth\""
        );
        s.set_user("max_stack_depth", Some("1MB"), &base, true)
            .unwrap();
        assert_eq!(s.get("max_stack_depth").unwrap(), "1MB");
        // User settings need no privilege.
        s.set_user("tcp_keepalives_idle", Some("30"), &base, false)
            .unwrap();
    }
}
