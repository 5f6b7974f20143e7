//! The settings each consumer reads, typed once from the session's
//! `Settings` where they change (the planner, the executor, the lock
//! manager, the ProcArray), never re-parsed where they are used.

use crate::gucs::{parse_bool, parse_duration_ms, parse_memory_kb_unit, Settings};

/// The planner's settings, typed (parsed once per change of the settings).
pub fn planner_settings(s: &Settings) -> sql::plan::PlannerSettings {
    let b = |n: &str| s.get(n).ok().and_then(parse_bool).unwrap_or(true);
    let f = |n: &str, d: f64| {
        s.get(n)
            .ok()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .unwrap_or(d)
    };
    let i = |n: &str, d: usize| {
        s.get(n)
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(d)
    };
    let d = sql::plan::PlannerSettings::default();
    sql::plan::PlannerSettings {
        enable_seqscan: b("enable_seqscan"),
        enable_indexscan: b("enable_indexscan"),
        enable_indexonlyscan: b("enable_indexonlyscan"),
        enable_bitmapscan: b("enable_bitmapscan"),
        enable_hashjoin: b("enable_hashjoin"),
        enable_nestloop: b("enable_nestloop"),
        enable_sort: b("enable_sort"),
        enable_hashagg: b("enable_hashagg"),
        enable_material: b("enable_material"),
        seq_page_cost: f("seq_page_cost", d.seq_page_cost),
        random_page_cost: f("random_page_cost", d.random_page_cost),
        cpu_tuple_cost: f("cpu_tuple_cost", d.cpu_tuple_cost),
        cpu_index_tuple_cost: f("cpu_index_tuple_cost", d.cpu_index_tuple_cost),
        cpu_operator_cost: f("cpu_operator_cost", d.cpu_operator_cost),
        effective_cache_size: s
            .get("effective_cache_size")
            .ok()
            .and_then(|v| parse_memory_kb_unit(v, 8))
            .map_or(d.effective_cache_size, |kb| (kb / 8) as f64),
        join_collapse_limit: i("join_collapse_limit", d.join_collapse_limit),
        plan_cache_mode: s
            .get("plan_cache_mode")
            .ok()
            .and_then(sql::plan::PlanCacheMode::parse)
            .unwrap_or_default(),
        from_collapse_limit: i("from_collapse_limit", d.from_collapse_limit),
        work_mem_kb: s
            .get("work_mem")
            .ok()
            .and_then(|v| parse_memory_kb_unit(v, 1))
            .unwrap_or(d.work_mem_kb),
        max_parallel_workers_per_gather: i(
            "max_parallel_workers_per_gather",
            d.max_parallel_workers_per_gather,
        ),
        parallel_setup_cost: f("parallel_setup_cost", d.parallel_setup_cost),
        parallel_tuple_cost: f("parallel_tuple_cost", d.parallel_tuple_cost),
        min_parallel_table_scan_blocks: s
            .get("min_parallel_table_scan_size")
            .ok()
            .and_then(|v| parse_memory_kb_unit(v, 8))
            .map_or(d.min_parallel_table_scan_blocks, |kb| (kb / 8) as f64),
        parallel_leader_participation: b("parallel_leader_participation"),
        debug_parallel_query: s
            .get("debug_parallel_query")
            .ok()
            .is_some_and(|v| v.eq_ignore_ascii_case("regress") || parse_bool(v) == Some(true)),
    }
}

/// The executor's settings, typed (parsed once per change of the settings).
pub fn exec_settings(s: &Settings) -> exec::ExecSettings {
    let d = exec::ExecSettings::default();
    let kb = |n: &str| s.get(n).ok().and_then(|v| parse_memory_kb_unit(v, 1));
    exec::ExecSettings {
        work_mem_kb: kb("work_mem").unwrap_or(d.work_mem_kb).max(64),
        hash_mem_multiplier: s
            .get("hash_mem_multiplier")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(d.hash_mem_multiplier),
        temp_file_limit_kb: kb("temp_file_limit"),
        maintenance_work_mem_kb: kb("maintenance_work_mem")
            .unwrap_or(d.maintenance_work_mem_kb)
            .max(1024),
        max_parallel_maintenance_workers: s
            .get("max_parallel_maintenance_workers")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(d.max_parallel_maintenance_workers),
        max_parallel_workers: ["max_parallel_workers", "max_worker_processes"]
            .iter()
            .filter_map(|n| s.get(n).ok().and_then(|v| v.trim().parse::<usize>().ok()))
            .min()
            .unwrap_or(d.max_parallel_workers),
        parallel_leader_participation: s
            .get("parallel_leader_participation")
            .ok()
            .and_then(parse_bool)
            .unwrap_or(true),
        default_toast_compression: s
            .get("default_toast_compression")
            .ok()
            .and_then(|v| access::toast::Compression::from_name(v.trim()))
            .unwrap_or(d.default_toast_compression),
    }
}

/// deadlock_timeout and lock_timeout, typed (parsed once per change).
pub fn lock_settings(s: &Settings) -> txn::lock::LockSettings {
    let ms = |n: &str| s.get(n).ok().and_then(|v| parse_duration_ms(v, 1));
    let d = txn::lock::LockSettings::default();
    txn::lock::LockSettings {
        deadlock_timeout: ms("deadlock_timeout")
            .filter(|&m| m > 0)
            .map_or(d.deadlock_timeout, std::time::Duration::from_millis),
        lock_timeout: ms("lock_timeout")
            .filter(|&m| m > 0)
            .map(std::time::Duration::from_millis),
    }
}

/// The SIREAD lock promotion limits (`max_pred_locks_per_transaction`,
/// `max_pred_locks_per_relation`, `max_pred_locks_per_page`).
pub fn predicate_lock_limits(s: &Settings) -> txn::ssi::Limits {
    let int = |name: &str, default: i32| {
        s.get(name)
            .ok()
            .and_then(|v| v.trim().parse::<i32>().ok())
            .unwrap_or(default)
    };
    txn::ssi::Limits::from_settings(
        int("max_pred_locks_per_transaction", 64),
        int("max_pred_locks_per_relation", -2),
        int("max_pred_locks_per_page", 2),
    )
}

/// `procarray_group_clear` (txn's grouped ProcArray exits).
pub fn procarray_group_clear(s: &Settings) -> bool {
    s.get("procarray_group_clear")
        .ok()
        .and_then(parse_bool)
        .unwrap_or(true)
}

/// The settings text input and output depend on (TimeZone, bytea_output,
/// IntervalStyle, DateStyle), typed (parsed once per change; each was
/// validated and put in its canonical form when set).
pub fn io_settings(s: &Settings) -> types::IoSettings {
    let get = |n: &str| s.get(n).ok();
    types::IoSettings {
        timezone: get("TimeZone")
            .and_then(types::datetime::TimeZone::parse)
            .unwrap_or_default(),
        bytea_output: get("bytea_output")
            .and_then(types::bytea::ByteaOutput::parse)
            .unwrap_or_default(),
        interval_style: get("IntervalStyle")
            .and_then(types::interval::IntervalStyle::parse)
            .unwrap_or_default(),
        date_style: get("DateStyle")
            .and_then(|v| {
                let iso = types::datestyle::DateStyle::ISO_MDY;
                types::datestyle::DateStyle::parse_setting(v, iso, iso).ok()
            })
            .unwrap_or_default(),
    }
}
