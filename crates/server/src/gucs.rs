//! Settings (GUCs) with PostgreSQL's names, defaults and contexts.

use std::collections::BTreeMap;

use common::{PgError, PgResult, SqlState};

pub use crate::gucs_typed::{
    exec_settings, lock_settings, planner_settings, procarray_group_clear,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GucContext {
    /// Fixed at server start (shared_buffers, port, ...).
    Postmaster,
    /// Internal, read-only (server_version, ...).
    Internal,
    /// Set in postgresql.conf or on the command line; a SIGHUP applies a
    /// change to the server (not to SHOW).
    Sighup,
    /// Set in the files, or with SET by a superuser's session (PostgreSQL's
    /// PGC_SUSET).
    Superuser,
    /// Settable by any session.
    User,
}

impl GucContext {
    /// pg_settings.context.
    pub fn name(self) -> &'static str {
        match self {
            GucContext::Postmaster => "postmaster",
            GucContext::Internal => "internal",
            GucContext::Sighup => "sighup",
            GucContext::Superuser => "superuser",
            GucContext::User => "user",
        }
    }
}

pub struct GucDef {
    pub name: &'static str,
    pub default: &'static str,
    pub context: GucContext,
    /// Sent to the client as ParameterStatus when it changes.
    pub reported: bool,
    pub description: &'static str,
}

const fn g(
    name: &'static str,
    default: &'static str,
    context: GucContext,
    reported: bool,
    description: &'static str,
) -> GucDef {
    GucDef {
        name,
        default,
        context,
        reported,
        description,
    }
}

use GucContext::*;

pub const SERVER_VERSION: &str = "15.18";
pub const SERVER_VERSION_NUM: &str = "150018";

pub static GUCS: &[GucDef] = &[
    g(
        "debug_buffer_mapping_partitions",
        "128",
        Postmaster,
        false,
        "Developer option: number of buffer-mapping partitions (ablation benchmarks).",
    ),
    g(
        "debug_buffer_victim_lock",
        "off",
        Postmaster,
        false,
        "Developer option: one lock around freelist and clock sweep (ablation benchmarks).",
    ),
    g(
        "debug_buffer_lock_free_lookup",
        "on",
        Postmaster,
        false,
        "Developer option: look buffers up without the mapping partition lock (ablation benchmarks).",
    ),
    g(
        "cpu_index_tuple_cost",
        "0.005",
        User,
        false,
        "Sets the planner's estimate of the cost of processing each index entry during an index scan.",
    ),
    g(
        "cpu_operator_cost",
        "0.0025",
        User,
        false,
        "Sets the planner's estimate of the cost of processing each operator or function call.",
    ),
    g(
        "cpu_tuple_cost",
        "0.01",
        User,
        false,
        "Sets the planner's estimate of the cost of processing each tuple (row).",
    ),
    g(
        "default_statistics_target",
        "100",
        User,
        false,
        "Sets the default statistics target.",
    ),
    g(
        "effective_cache_size",
        "4GB",
        User,
        false,
        "Sets the planner's assumption about the total size of the data caches.",
    ),
    g(
        "enable_bitmapscan",
        "on",
        User,
        false,
        "Enables the planner's use of bitmap-scan plans (no effect yet: there are no indexes).",
    ),
    g(
        "enable_hashagg",
        "on",
        User,
        false,
        "Enables the planner's use of hashed aggregation plans (no effect yet: aggregation is always hashed).",
    ),
    g(
        "enable_hashjoin",
        "on",
        User,
        false,
        "Enables the planner's use of hash join plans.",
    ),
    g(
        "enable_indexonlyscan",
        "on",
        User,
        false,
        "Enables the planner's use of index-only-scan plans (no effect yet: there are no indexes).",
    ),
    g(
        "enable_indexscan",
        "on",
        User,
        false,
        "Enables the planner's use of index-scan plans (no effect yet: there are no indexes).",
    ),
    g(
        "enable_material",
        "on",
        User,
        false,
        "Enables the planner's use of materialization (no effect yet: a nested loop always materializes its inner input).",
    ),
    g(
        "enable_mergejoin",
        "on",
        User,
        false,
        "Enables the planner's use of merge join plans (no effect yet: there is no merge join).",
    ),
    g(
        "enable_nestloop",
        "on",
        User,
        false,
        "Enables the planner's use of nested-loop join plans.",
    ),
    g(
        "enable_seqscan",
        "on",
        User,
        false,
        "Enables the planner's use of sequential-scan plans.",
    ),
    g(
        "quote_all_identifiers",
        "off",
        User,
        false,
        "When generating SQL fragments, quote all identifiers.",
    ),
    g(
        "procarray_group_clear",
        "on",
        Sighup,
        false,
        "Scalegres: ending transactions leave the ProcArray in groups when its lock is busy (off only to measure the gain).",
    ),
    g(
        "default_transaction_read_only",
        "off",
        User,
        true,
        "Sets the default read-only status of new transactions.",
    ),
    g(
        "default_transaction_deferrable",
        "off",
        User,
        false,
        "Sets the default deferrable status of new transactions.",
    ),
    g(
        "transaction_read_only",
        "off",
        User,
        false,
        "Sets the current transaction's read-only status.",
    ),
    g(
        "transaction_deferrable",
        "off",
        User,
        false,
        "Whether to defer a read-only serializable transaction until it can be executed with no possible serialization failures.",
    ),
    g(
        "row_security",
        "on",
        User,
        false,
        "Enable row security.",
    ),
    // Set by pg_dump's output. There are no function bodies to check, no
    // xml type, one tablespace and one table access method: the settings
    // are accepted (validated) and change nothing.
    g(
        "check_function_bodies",
        "on",
        User,
        false,
        "Check routine bodies during CREATE FUNCTION and CREATE PROCEDURE.",
    ),
    g(
        "xmloption",
        "content",
        User,
        false,
        "Sets whether XML data in implicit parsing and serialization operations is to be considered as documents or content fragments.",
    ),
    g(
        "default_tablespace",
        "",
        User,
        false,
        "Sets the default tablespace to create tables and indexes in.",
    ),
    g(
        "default_table_access_method",
        "heap",
        User,
        false,
        "Sets the default table access method for new tables.",
    ),
    g(
        "synchronize_seqscans",
        "on",
        User,
        false,
        "Enable synchronized sequential scans.",
    ),
    g(
        "enable_sort",
        "on",
        User,
        false,
        "Enables the planner's use of explicit sort steps.",
    ),
    g(
        "from_collapse_limit",
        "8",
        User,
        false,
        "Sets the FROM-list size beyond which subqueries are not collapsed.",
    ),
    g(
        "join_collapse_limit",
        "8",
        User,
        false,
        "Sets the FROM-list size beyond which JOIN constructs are not flattened.",
    ),
    g(
        "plan_cache_mode",
        "auto",
        User,
        false,
        "Controls the planner's selection of custom or generic plan.",
    ),
    g(
        "random_page_cost",
        "4",
        User,
        false,
        "Sets the planner's estimate of the cost of a nonsequentially fetched disk page.",
    ),
    g(
        "seq_page_cost",
        "1",
        User,
        false,
        "Sets the planner's estimate of the cost of a sequentially fetched disk page.",
    ),
    g(
        "io_method",
        "sync",
        Postmaster,
        false,
        "Selects the method for executing asynchronous I/O: worker (read-ahead threads) or sync.",
    ),
    g(
        "application_name",
        "",
        User,
        true,
        "Sets the application name to be reported in statistics and logs.",
    ),
    g(
        "authentication_timeout",
        "1min",
        Sighup,
        false,
        "Sets the maximum allowed time to complete client authentication.",
    ),
    g(
        "autovacuum",
        "on",
        Sighup,
        false,
        "Starts the autovacuum subprocess.",
    ),
    g(
        "autovacuum_analyze_scale_factor",
        "0.1",
        Sighup,
        false,
        "Number of tuple inserts, updates, or deletes prior to analyze as a fraction of reltuples.",
    ),
    g(
        "autovacuum_analyze_threshold",
        "50",
        Sighup,
        false,
        "Minimum number of tuple inserts, updates, or deletes prior to analyze.",
    ),
    g(
        "autovacuum_max_workers",
        "3",
        Postmaster,
        false,
        "Sets the maximum number of simultaneously running autovacuum worker processes.",
    ),
    g(
        "autovacuum_naptime",
        "1min",
        Sighup,
        false,
        "Time to sleep between autovacuum runs.",
    ),
    g(
        "autovacuum_vacuum_insert_scale_factor",
        "0.2",
        Sighup,
        false,
        "Number of tuple inserts prior to vacuum as a fraction of reltuples.",
    ),
    g(
        "autovacuum_vacuum_insert_threshold",
        "1000",
        Sighup,
        false,
        "Minimum number of tuple inserts prior to vacuum, or -1 to disable insert vacuums.",
    ),
    g(
        "autovacuum_vacuum_scale_factor",
        "0.2",
        Sighup,
        false,
        "Number of tuple updates or deletes prior to vacuum as a fraction of reltuples.",
    ),
    g(
        "autovacuum_vacuum_threshold",
        "50",
        Sighup,
        false,
        "Minimum number of tuple updates or deletes prior to vacuum.",
    ),
    g(
        "log_autovacuum_min_duration",
        "10min",
        Sighup,
        false,
        "Sets the minimum execution time above which autovacuum actions will be logged.",
    ),
    g(
        "track_counts",
        "on",
        Superuser,
        false,
        "Collects statistics on database activity.",
    ),
    g(
        "bgwriter_delay",
        "200ms",
        Sighup,
        false,
        "Background writer sleep time between rounds.",
    ),
    g(
        "bgwriter_lru_maxpages",
        "100",
        Sighup,
        false,
        "Background writer maximum number of LRU pages to flush per round.",
    ),
    g(
        "bgwriter_lru_multiplier",
        "2",
        Sighup,
        false,
        "Multiple of the average buffer usage to free per round.",
    ),
    g(
        "checkpoint_timeout",
        "5min",
        Sighup,
        false,
        "Sets the maximum time between automatic WAL checkpoints.",
    ),
    g(
        "client_connection_check_interval",
        "0",
        User,
        false,
        "Sets the time interval between checks for disconnection while running queries.",
    ),
    g(
        "client_encoding",
        "UTF8",
        User,
        true,
        "Sets the client's character set encoding.",
    ),
    g(
        "client_min_messages",
        "notice",
        User,
        false,
        "Sets the message levels that are sent to the client.",
    ),
    g(
        "data_directory",
        "",
        Postmaster,
        false,
        "Sets the server's data directory.",
    ),
    g(
        "data_directory_mode",
        "0700",
        Internal,
        false,
        "Shows the mode of the data directory.",
    ),
    g(
        "DateStyle",
        "ISO, MDY",
        User,
        true,
        "Sets the display format for date and time values.",
    ),
    g(
        "deadlock_timeout",
        "1s",
        Superuser,
        false,
        "Sets the time to wait on a lock before checking for deadlock.",
    ),
    g(
        "lock_timeout",
        "0",
        User,
        false,
        "Sets the maximum allowed duration of any wait for a lock.",
    ),
    g(
        "default_transaction_isolation",
        "read committed",
        User,
        false,
        "Sets the transaction isolation level of each new transaction.",
    ),
    g(
        "extra_float_digits",
        "1",
        User,
        false,
        "Sets the number of digits displayed for floating-point values.",
    ),
    g(
        "fsync",
        "on",
        Sighup,
        false,
        "Forces synchronization of updates to disk.",
    ),
    g(
        "hash_mem_multiplier",
        "2",
        User,
        false,
        "Multiple of \"work_mem\" to use for hash tables.",
    ),
    g(
        "in_hot_standby",
        "off",
        Internal,
        true,
        "Shows whether hot standby is currently active.",
    ),
    g(
        "integer_datetimes",
        "on",
        Internal,
        true,
        "Shows whether datetimes are integer based.",
    ),
    g(
        "IntervalStyle",
        "postgres",
        User,
        true,
        "Sets the display format for interval values.",
    ),
    g(
        "is_superuser",
        "on",
        Internal,
        true,
        "Shows whether the current user is a superuser.",
    ),
    g(
        "lc_messages",
        "C",
        Superuser,
        false,
        "Sets the language in which messages are displayed.",
    ),
    g(
        "listen_addresses",
        "localhost",
        Postmaster,
        false,
        "Sets the host name or IP address(es) to listen to.",
    ),
    g(
        "max_connections",
        "100",
        Postmaster,
        false,
        "Sets the maximum number of concurrent connections.",
    ),
    g(
        "max_parallel_maintenance_workers",
        "2",
        User,
        false,
        "Sets the maximum number of parallel processes per maintenance operation.",
    ),
    g(
        "max_parallel_workers",
        "8",
        User,
        false,
        "Sets the maximum number of parallel workers that can be active at one time.",
    ),
    g(
        "max_parallel_workers_per_gather",
        "2",
        User,
        false,
        "Sets the maximum number of parallel processes per executor node.",
    ),
    g(
        "max_stack_depth",
        "2MB",
        Superuser,
        false,
        "Sets the maximum stack depth, in kilobytes.",
    ),
    g(
        "max_wal_size",
        "1GB",
        Sighup,
        false,
        "Sets the WAL size that triggers a checkpoint.",
    ),
    g(
        "max_worker_processes",
        "8",
        Postmaster,
        false,
        "Maximum number of concurrent worker processes.",
    ),
    g(
        "port",
        "5432",
        Postmaster,
        false,
        "Sets the TCP port the server listens on.",
    ),
    g(
        "search_path",
        "\"$user\", public",
        User,
        false,
        "Sets the schema search order for names that are not schema-qualified.",
    ),
    g(
        "server_encoding",
        "UTF8",
        Internal,
        true,
        "Shows the server (database) character set encoding.",
    ),
    g(
        "server_version",
        SERVER_VERSION,
        Internal,
        true,
        "Shows the server version.",
    ),
    g(
        "server_version_num",
        SERVER_VERSION_NUM,
        Internal,
        false,
        "Shows the server version as an integer.",
    ),
    g(
        "session_authorization",
        "postgres",
        Internal,
        true,
        "Sets the session user name.",
    ),
    g(
        "shared_buffers",
        "128MB",
        Postmaster,
        false,
        "Sets the number of shared memory buffers used by the server.",
    ),
    g(
        "ssl",
        "off",
        Sighup,
        false,
        "Enables SSL connections.",
    ),
    g(
        "ssl_ca_file",
        "",
        Sighup,
        false,
        "Location of the SSL certificate authority file.",
    ),
    g(
        "ssl_cert_file",
        "server.crt",
        Sighup,
        false,
        "Location of the SSL server certificate file.",
    ),
    g(
        "ssl_key_file",
        "server.key",
        Sighup,
        false,
        "Location of the SSL server private key file.",
    ),
    g(
        "ssl_max_protocol_version",
        "",
        Sighup,
        false,
        "Sets the maximum SSL/TLS protocol version to use.",
    ),
    g(
        "ssl_min_protocol_version",
        "TLSv1.2",
        Sighup,
        false,
        "Sets the minimum SSL/TLS protocol version to use.",
    ),
    g(
        "standard_conforming_strings",
        "on",
        User,
        true,
        "Causes '...' strings to treat backslashes literally.",
    ),
    g(
        "password_encryption",
        "scram-sha-256",
        User,
        false,
        "Chooses the algorithm for encrypting passwords.",
    ),
    g(
        "statement_timeout",
        "0",
        User,
        false,
        "Sets the maximum allowed duration of any statement.",
    ),
    // Accepted for dumps and tools that set it to 0 (pg_dump's output
    // does); a timeout itself is refused as not supported (validate).
    g(
        "idle_in_transaction_session_timeout",
        "0",
        User,
        false,
        "Sets the maximum allowed idle time between queries, when in a transaction.",
    ),
    g(
        "superuser_reserved_connections",
        "3",
        Postmaster,
        false,
        "Sets the number of connection slots reserved for superusers.",
    ),
    g(
        "synchronous_commit",
        "on",
        User,
        false,
        "Sets the current transaction's synchronization level.",
    ),
    g(
        "tcp_keepalives_count",
        "0",
        User,
        false,
        "Maximum number of TCP keepalive retransmits.",
    ),
    g(
        "tcp_keepalives_idle",
        "0",
        User,
        false,
        "Time between issuing TCP keepalives.",
    ),
    g(
        "tcp_keepalives_interval",
        "0",
        User,
        false,
        "Time between TCP keepalive retransmits.",
    ),
    g(
        "temp_file_limit",
        "-1",
        Superuser,
        false,
        "Limits the total size of all temporary files used by each process.",
    ),
    g(
        "TimeZone",
        "UTC",
        User,
        true,
        "Sets the time zone for displaying and interpreting time stamps.",
    ),
    g(
        "transaction_isolation",
        "read committed",
        User,
        false,
        "Sets the current transaction's isolation level.",
    ),
    g(
        "unix_socket_directories",
        "/tmp",
        Postmaster,
        false,
        "Sets the directories where Unix-domain sockets will be created.",
    ),
    g(
        "work_mem",
        "4MB",
        User,
        false,
        "Sets the maximum memory to be used for query workspaces.",
    ),
    g(
        "maintenance_work_mem",
        "64MB",
        User,
        false,
        "Sets the maximum memory to be used for maintenance operations.",
    ),
    // Write-ahead log (crates/wal).
    g(
        "checkpoint_completion_target",
        "0.9",
        Sighup,
        false,
        "Time spent flushing dirty buffers during checkpoint, as fraction of checkpoint interval.",
    ),
    g(
        "commit_delay",
        "0",
        Superuser,
        false,
        "Sets the delay in microseconds between transaction commit and flushing WAL to disk.",
    ),
    g(
        "commit_siblings",
        "5",
        User,
        false,
        "Sets the minimum number of concurrent open transactions required before performing commit_delay.",
    ),
    g(
        "full_page_writes",
        "on",
        Sighup,
        false,
        "Writes full pages to WAL when first modified after a checkpoint.",
    ),
    g(
        "min_wal_size",
        "80MB",
        Sighup,
        false,
        "Sets the minimum size to shrink the WAL to.",
    ),
    g(
        "wal_buffers",
        "-1",
        Postmaster,
        false,
        "Sets the number of disk-page buffers in shared memory for WAL.",
    ),
    g(
        "wal_sync_method",
        "fdatasync",
        Sighup,
        false,
        "Selects the method used for forcing WAL updates to disk.",
    ),
    g(
        "wal_writer_delay",
        "200ms",
        Sighup,
        false,
        "Time between WAL flushes performed in the WAL writer.",
    ),
];

pub fn lookup(name: &str) -> Option<&'static GucDef> {
    GUCS.iter().find(|d| d.name.eq_ignore_ascii_case(name))
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
        validate(def, value)?;
        self.values.insert(def.name, canonical_value(def, value));
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
            Some(v) => {
                validate(def, v)?;
                canonical_value(def, v)
            }
            None => defaults.get(def.name)?.to_string(),
        };
        self.values.insert(def.name, v);
        self.generation = next_generation();
        Ok(def.name)
    }

    pub fn generation(&self) -> u64 {
        self.generation
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
        "TimeZone" => types::datetime::TimeZone::parse(value)
            .map(|tz| tz.canonical_name(value))
            .unwrap_or_else(|| value.to_string()),
        _ => value.to_string(),
    }
}

fn validate(def: &GucDef, value: &str) -> PgResult<()> {
    let bad = || {
        PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("invalid value for parameter \"{}\": \"{value}\"", def.name),
        )
    };
    match def.name {
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
        "client_encoding" => {
            let v = value.to_ascii_uppercase().replace(['-', '_'], "");
            if v != "UTF8" && v != "UNICODE" && v != "SQLASCII" {
                return Err(PgError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!("invalid value for parameter \"client_encoding\": \"{value}\""),
                ));
            }
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
