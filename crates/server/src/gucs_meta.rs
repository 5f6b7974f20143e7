//! What pg_settings shows of each setting beyond its value: unit, category,
//! type, bounds and allowed values, as PostgreSQL 15 declares them for the
//! settings it shares with us (read off its pg_settings), and ours for the
//! settings only Scalegres has.

/// A setting's type as pg_settings.vartype names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarType {
    Bool,
    Integer,
    Real,
    String,
    Enum,
}

impl VarType {
    pub fn name(self) -> &'static str {
        match self {
            VarType::Bool => "bool",
            VarType::Integer => "integer",
            VarType::Real => "real",
            VarType::String => "string",
            VarType::Enum => "enum",
        }
    }
}

pub struct GucMeta {
    pub name: &'static str,
    /// The unit of `setting` (kB, 8kB, ms, s, min), for integers and reals.
    pub unit: Option<&'static str>,
    pub category: &'static str,
    pub vartype: VarType,
    pub min: Option<&'static str>,
    pub max: Option<&'static str>,
    pub enumvals: &'static [&'static str],
}

const fn m(
    name: &'static str,
    unit: Option<&'static str>,
    category: &'static str,
    vartype: VarType,
    min: Option<&'static str>,
    max: Option<&'static str>,
    enumvals: &'static [&'static str],
) -> GucMeta {
    GucMeta {
        name,
        unit,
        category,
        vartype,
        min,
        max,
        enumvals,
    }
}

use VarType::{Bool, Enum, Integer, Real};

pub static GUC_META: &[GucMeta] = &[
    m(
        "application_name",
        None,
        "Reporting and Logging / What to Log",
        VarType::String,
        None,
        None,
        &[],
    ),
    m(
        "authentication_timeout",
        Some("s"),
        "Connections and Authentication / Authentication",
        Integer,
        Some("1"),
        Some("600"),
        &[],
    ),
    m(
        "bgwriter_delay",
        Some("ms"),
        "Resource Usage / Background Writer",
        Integer,
        Some("10"),
        Some("10000"),
        &[],
    ),
    m(
        "bgwriter_lru_maxpages",
        None,
        "Resource Usage / Background Writer",
        Integer,
        Some("0"),
        Some("1073741823"),
        &[],
    ),
    m(
        "bgwriter_lru_multiplier",
        None,
        "Resource Usage / Background Writer",
        Real,
        Some("0"),
        Some("10"),
        &[],
    ),
    m(
        "checkpoint_timeout",
        Some("s"),
        "Write-Ahead Log / Checkpoints",
        Integer,
        Some("30"),
        Some("86400"),
        &[],
    ),
    m(
        "client_connection_check_interval",
        Some("ms"),
        "Connections and Authentication / Connection Settings",
        Integer,
        Some("0"),
        Some("2147483647"),
        &[],
    ),
    m(
        "client_encoding",
        None,
        "Client Connection Defaults / Locale and Formatting",
        VarType::String,
        None,
        None,
        &[],
    ),
    m(
        "client_min_messages",
        None,
        "Client Connection Defaults / Statement Behavior",
        Enum,
        None,
        None,
        &[
            "debug5", "debug4", "debug3", "debug2", "debug1", "log", "notice", "warning", "error",
        ],
    ),
    m(
        "cpu_index_tuple_cost",
        None,
        "Query Tuning / Planner Cost Constants",
        Real,
        Some("0"),
        Some("1.79769e+308"),
        &[],
    ),
    m(
        "cpu_operator_cost",
        None,
        "Query Tuning / Planner Cost Constants",
        Real,
        Some("0"),
        Some("1.79769e+308"),
        &[],
    ),
    m(
        "cpu_tuple_cost",
        None,
        "Query Tuning / Planner Cost Constants",
        Real,
        Some("0"),
        Some("1.79769e+308"),
        &[],
    ),
    m(
        "data_directory",
        None,
        "File Locations",
        VarType::String,
        None,
        None,
        &[],
    ),
    m(
        "data_directory_mode",
        None,
        "Preset Options",
        Integer,
        Some("0"),
        Some("511"),
        &[],
    ),
    m(
        "DateStyle",
        None,
        "Client Connection Defaults / Locale and Formatting",
        VarType::String,
        None,
        None,
        &[],
    ),
    m(
        "debug_buffer_lock_free_lookup",
        None,
        "Developer Options",
        Bool,
        None,
        None,
        &[],
    ),
    m(
        "debug_buffer_mapping_partitions",
        None,
        "Developer Options",
        Integer,
        Some("1"),
        Some("1024"),
        &[],
    ),
    m(
        "debug_buffer_victim_lock",
        None,
        "Developer Options",
        Bool,
        None,
        None,
        &[],
    ),
    m(
        "default_statistics_target",
        None,
        "Query Tuning / Other Planner Options",
        Integer,
        Some("1"),
        Some("10000"),
        &[],
    ),
    m(
        "deadlock_timeout",
        Some("ms"),
        "Lock Management",
        Integer,
        Some("1"),
        Some("2147483647"),
        &[],
    ),
    m(
        "lock_timeout",
        Some("ms"),
        "Client Connection Defaults / Statement Behavior",
        Integer,
        Some("0"),
        Some("2147483647"),
        &[],
    ),
    m(
        "default_transaction_isolation",
        None,
        "Client Connection Defaults / Statement Behavior",
        Enum,
        None,
        None,
        &[
            "serializable",
            "repeatable read",
            "read committed",
            "read uncommitted",
        ],
    ),
    m(
        "effective_cache_size",
        Some("8kB"),
        "Query Tuning / Planner Cost Constants",
        Integer,
        Some("1"),
        Some("2147483647"),
        &[],
    ),
    m(
        "enable_bitmapscan",
        None,
        "Query Tuning / Planner Method Configuration",
        Bool,
        None,
        None,
        &[],
    ),
    m(
        "enable_hashagg",
        None,
        "Query Tuning / Planner Method Configuration",
        Bool,
        None,
        None,
        &[],
    ),
    m(
        "enable_hashjoin",
        None,
        "Query Tuning / Planner Method Configuration",
        Bool,
        None,
        None,
        &[],
    ),
    m(
        "enable_indexonlyscan",
        None,
        "Query Tuning / Planner Method Configuration",
        Bool,
        None,
        None,
        &[],
    ),
    m(
        "enable_indexscan",
        None,
        "Query Tuning / Planner Method Configuration",
        Bool,
        None,
        None,
        &[],
    ),
    m(
        "enable_material",
        None,
        "Query Tuning / Planner Method Configuration",
        Bool,
        None,
        None,
        &[],
    ),
    m(
        "enable_mergejoin",
        None,
        "Query Tuning / Planner Method Configuration",
        Bool,
        None,
        None,
        &[],
    ),
    m(
        "enable_nestloop",
        None,
        "Query Tuning / Planner Method Configuration",
        Bool,
        None,
        None,
        &[],
    ),
    m(
        "enable_seqscan",
        None,
        "Query Tuning / Planner Method Configuration",
        Bool,
        None,
        None,
        &[],
    ),
    m(
        "enable_sort",
        None,
        "Query Tuning / Planner Method Configuration",
        Bool,
        None,
        None,
        &[],
    ),
    m(
        "quote_all_identifiers",
        None,
        "Version and Platform Compatibility / Previous PostgreSQL Versions",
        Bool,
        None,
        None,
        &[],
    ),
    m(
        "row_security",
        None,
        "Client Connection Defaults / Statement Behavior",
        Bool,
        None,
        None,
        &[],
    ),
    m(
        "synchronize_seqscans",
        None,
        "Version and Platform Compatibility / Previous PostgreSQL Versions",
        Bool,
        None,
        None,
        &[],
    ),
    m(
        "extra_float_digits",
        None,
        "Client Connection Defaults / Locale and Formatting",
        Integer,
        Some("-15"),
        Some("3"),
        &[],
    ),
    m(
        "from_collapse_limit",
        None,
        "Query Tuning / Other Planner Options",
        Integer,
        Some("1"),
        Some("2147483647"),
        &[],
    ),
    m(
        "fsync",
        None,
        "Write-Ahead Log / Settings",
        Bool,
        None,
        None,
        &[],
    ),
    m(
        "hash_mem_multiplier",
        None,
        "Resource Usage / Memory",
        Real,
        Some("1"),
        Some("1000"),
        &[],
    ),
    m(
        "in_hot_standby",
        None,
        "Preset Options",
        Bool,
        None,
        None,
        &[],
    ),
    m(
        "integer_datetimes",
        None,
        "Preset Options",
        Bool,
        None,
        None,
        &[],
    ),
    m(
        "IntervalStyle",
        None,
        "Client Connection Defaults / Locale and Formatting",
        Enum,
        None,
        None,
        &["postgres", "postgres_verbose", "sql_standard", "iso_8601"],
    ),
    m(
        "io_method",
        None,
        "Resource Usage / Asynchronous Behavior",
        Enum,
        None,
        None,
        &["sync", "worker"],
    ),
    m(
        "is_superuser",
        None,
        "Preset Options",
        Bool,
        None,
        None,
        &[],
    ),
    m(
        "join_collapse_limit",
        None,
        "Query Tuning / Other Planner Options",
        Integer,
        Some("1"),
        Some("2147483647"),
        &[],
    ),
    m(
        "lc_messages",
        None,
        "Client Connection Defaults / Locale and Formatting",
        VarType::String,
        None,
        None,
        &[],
    ),
    m(
        "listen_addresses",
        None,
        "Connections and Authentication / Connection Settings",
        VarType::String,
        None,
        None,
        &[],
    ),
    m(
        "max_connections",
        None,
        "Connections and Authentication / Connection Settings",
        Integer,
        Some("1"),
        Some("262143"),
        &[],
    ),
    m(
        "max_parallel_workers",
        None,
        "Resource Usage / Asynchronous Behavior",
        Integer,
        Some("0"),
        Some("1024"),
        &[],
    ),
    m(
        "max_parallel_workers_per_gather",
        None,
        "Resource Usage / Asynchronous Behavior",
        Integer,
        Some("0"),
        Some("1024"),
        &[],
    ),
    m(
        "max_stack_depth",
        Some("kB"),
        "Resource Usage / Memory",
        Integer,
        Some("100"),
        Some("2147483647"),
        &[],
    ),
    m(
        "max_wal_size",
        Some("MB"),
        "Write-Ahead Log / Checkpoints",
        Integer,
        Some("2"),
        Some("2147483647"),
        &[],
    ),
    m(
        "max_worker_processes",
        None,
        "Resource Usage / Asynchronous Behavior",
        Integer,
        Some("0"),
        Some("262143"),
        &[],
    ),
    m(
        "password_encryption",
        None,
        "Connections and Authentication / Authentication",
        Enum,
        None,
        None,
        &["md5", "scram-sha-256"],
    ),
    m(
        "plan_cache_mode",
        None,
        "Query Tuning / Other Planner Options",
        Enum,
        None,
        None,
        &["auto", "force_generic_plan", "force_custom_plan"],
    ),
    m(
        "port",
        None,
        "Connections and Authentication / Connection Settings",
        Integer,
        Some("1"),
        Some("65535"),
        &[],
    ),
    m(
        "random_page_cost",
        None,
        "Query Tuning / Planner Cost Constants",
        Real,
        Some("0"),
        Some("1.79769e+308"),
        &[],
    ),
    m(
        "search_path",
        None,
        "Client Connection Defaults / Statement Behavior",
        VarType::String,
        None,
        None,
        &[],
    ),
    m(
        "seq_page_cost",
        None,
        "Query Tuning / Planner Cost Constants",
        Real,
        Some("0"),
        Some("1.79769e+308"),
        &[],
    ),
    m(
        "server_encoding",
        None,
        "Preset Options",
        VarType::String,
        None,
        None,
        &[],
    ),
    m(
        "server_version",
        None,
        "Preset Options",
        VarType::String,
        None,
        None,
        &[],
    ),
    m(
        "server_version_num",
        None,
        "Preset Options",
        Integer,
        Some("150018"),
        Some("150018"),
        &[],
    ),
    m(
        "session_authorization",
        None,
        "Connections and Authentication / Connection Settings",
        VarType::String,
        None,
        None,
        &[],
    ),
    m(
        "shared_buffers",
        Some("8kB"),
        "Resource Usage / Memory",
        Integer,
        Some("16"),
        Some("1073741823"),
        &[],
    ),
    m(
        "ssl",
        None,
        "Connections and Authentication / SSL",
        Bool,
        None,
        None,
        &[],
    ),
    m(
        "ssl_ca_file",
        None,
        "Connections and Authentication / SSL",
        VarType::String,
        None,
        None,
        &[],
    ),
    m(
        "ssl_cert_file",
        None,
        "Connections and Authentication / SSL",
        VarType::String,
        None,
        None,
        &[],
    ),
    m(
        "ssl_key_file",
        None,
        "Connections and Authentication / SSL",
        VarType::String,
        None,
        None,
        &[],
    ),
    m(
        "ssl_max_protocol_version",
        None,
        "Connections and Authentication / SSL",
        Enum,
        None,
        None,
        &["", "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"],
    ),
    m(
        "ssl_min_protocol_version",
        None,
        "Connections and Authentication / SSL",
        Enum,
        None,
        None,
        &["TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"],
    ),
    m(
        "standard_conforming_strings",
        None,
        "Version and Platform Compatibility / Previous PostgreSQL Versions",
        Bool,
        None,
        None,
        &[],
    ),
    m(
        "statement_timeout",
        Some("ms"),
        "Client Connection Defaults / Statement Behavior",
        Integer,
        Some("0"),
        Some("2147483647"),
        &[],
    ),
    m(
        "superuser_reserved_connections",
        None,
        "Connections and Authentication / Connection Settings",
        Integer,
        Some("0"),
        Some("262143"),
        &[],
    ),
    m(
        "synchronous_commit",
        None,
        "Write-Ahead Log / Settings",
        Enum,
        None,
        None,
        &["local", "remote_write", "remote_apply", "on", "off"],
    ),
    m(
        "tcp_keepalives_count",
        None,
        "Connections and Authentication / Connection Settings",
        Integer,
        Some("0"),
        Some("2147483647"),
        &[],
    ),
    m(
        "tcp_keepalives_idle",
        Some("s"),
        "Connections and Authentication / Connection Settings",
        Integer,
        Some("0"),
        Some("2147483647"),
        &[],
    ),
    m(
        "tcp_keepalives_interval",
        Some("s"),
        "Connections and Authentication / Connection Settings",
        Integer,
        Some("0"),
        Some("2147483647"),
        &[],
    ),
    m(
        "temp_file_limit",
        Some("kB"),
        "Resource Usage / Disk",
        Integer,
        Some("-1"),
        Some("2147483647"),
        &[],
    ),
    m(
        "TimeZone",
        None,
        "Client Connection Defaults / Locale and Formatting",
        VarType::String,
        None,
        None,
        &[],
    ),
    m(
        "transaction_isolation",
        None,
        "Client Connection Defaults / Statement Behavior",
        Enum,
        None,
        None,
        &[
            "serializable",
            "repeatable read",
            "read committed",
            "read uncommitted",
        ],
    ),
    m(
        "unix_socket_directories",
        None,
        "Connections and Authentication / Connection Settings",
        VarType::String,
        None,
        None,
        &[],
    ),
    m(
        "work_mem",
        Some("kB"),
        "Resource Usage / Memory",
        Integer,
        Some("64"),
        Some("2147483647"),
        &[],
    ),
    m(
        "checkpoint_completion_target",
        None,
        "Write-Ahead Log / Checkpoints",
        Real,
        Some("0"),
        Some("1"),
        &[],
    ),
    m(
        "commit_delay",
        None,
        "Write-Ahead Log / Settings",
        Integer,
        Some("0"),
        Some("100000"),
        &[],
    ),
    m(
        "commit_siblings",
        None,
        "Write-Ahead Log / Settings",
        Integer,
        Some("0"),
        Some("1000"),
        &[],
    ),
    m(
        "full_page_writes",
        None,
        "Write-Ahead Log / Settings",
        Bool,
        None,
        None,
        &[],
    ),
    m(
        "min_wal_size",
        Some("MB"),
        "Write-Ahead Log / Checkpoints",
        Integer,
        Some("2"),
        Some("2147483647"),
        &[],
    ),
    m(
        "wal_buffers",
        Some("8kB"),
        "Write-Ahead Log / Settings",
        Integer,
        Some("-1"),
        Some("262143"),
        &[],
    ),
    m(
        "wal_sync_method",
        None,
        "Write-Ahead Log / Settings",
        Enum,
        None,
        None,
        &["fsync", "fdatasync", "open_sync", "open_datasync"],
    ),
    m(
        "wal_writer_delay",
        Some("ms"),
        "Write-Ahead Log / Settings",
        Integer,
        Some("1"),
        Some("10000"),
        &[],
    ),
];

pub fn meta(name: &str) -> Option<&'static GucMeta> {
    GUC_META.iter().find(|m| m.name.eq_ignore_ascii_case(name))
}

/// Kilobytes in one memory unit.
fn memory_unit_kb(u: &str) -> Option<f64> {
    Some(match u {
        "B" => 1.0 / 1024.0,
        "kB" => 1.0,
        "8kB" => 8.0,
        "MB" => 1024.0,
        "GB" => 1024.0 * 1024.0,
        "TB" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    })
}

/// Milliseconds in one time unit.
fn time_unit_ms(u: &str) -> Option<f64> {
    Some(match u {
        "us" => 0.001,
        "ms" => 1.0,
        "s" => 1000.0,
        "min" => 60_000.0,
        "h" => 3_600_000.0,
        "d" => 86_400_000.0,
        _ => return None,
    })
}

/// A value as pg_settings.setting shows it: numbers in the setting's own
/// unit (work_mem '4MB' is 4096, in kB), booleans as on/off.
pub fn display_setting(meta: &GucMeta, value: &str) -> String {
    let v = value.trim();
    match meta.vartype {
        VarType::Bool => match crate::gucs::parse_bool(v) {
            Some(true) => "on".into(),
            Some(false) => "off".into(),
            None => v.into(),
        },
        VarType::Integer | VarType::Real => {
            let Some(unit) = meta.unit else {
                return v.into();
            };
            let split = v
                .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
                .unwrap_or(v.len());
            let (num, suffix) = v.split_at(split);
            let (Ok(n), suffix) = (num.parse::<f64>(), suffix.trim()) else {
                return v.into();
            };
            if suffix.is_empty() {
                return num.into();
            }
            let scaled = match (memory_unit_kb(unit), memory_unit_kb(suffix)) {
                (Some(base), Some(s)) => n * s / base,
                _ => match (time_unit_ms(unit), time_unit_ms(suffix)) {
                    (Some(base), Some(s)) => n * s / base,
                    _ => return v.into(),
                },
            };
            if meta.vartype == VarType::Integer {
                format!("{}", scaled.round() as i64)
            } else {
                format!("{scaled}")
            }
        }
        VarType::String | VarType::Enum => v.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_show_in_their_units() {
        let m = |n| meta(n).unwrap();
        assert_eq!(display_setting(m("work_mem"), "4MB"), "4096");
        assert_eq!(display_setting(m("shared_buffers"), "128MB"), "16384");
        assert_eq!(display_setting(m("statement_timeout"), "1min"), "60000");
        assert_eq!(display_setting(m("authentication_timeout"), "1min"), "60");
        assert_eq!(display_setting(m("effective_cache_size"), "4GB"), "524288");
        assert_eq!(display_setting(m("enable_seqscan"), "true"), "on");
        assert_eq!(display_setting(m("work_mem"), "1024"), "1024");
        assert_eq!(display_setting(m("seq_page_cost"), "1"), "1");
    }

    #[test]
    fn every_setting_has_metadata() {
        for d in crate::gucs::GUCS {
            assert!(
                meta(d.name).is_some(),
                "{} has no pg_settings metadata",
                d.name
            );
        }
    }
}
