//! ANALYZE: samples a table through `access` and computes per-column
//! statistics as PostgreSQL's analyze.c does (compute_scalar_stats: null
//! fraction, average width, the Haas-Stokes n_distinct, most common values
//! chosen by analyze_mcv_list, an equi-depth histogram of the rest and the
//! physical-order correlation), then stores them with reltuples/relpages
//! through the catalog's DDL path.
//!
//! Every type we have has a btree ordering, so every column gets the scalar
//! statistics; compute_distinct_stats (MCVs only) has no user yet.

use std::cmp::Ordering;

use access::heap::sample::{acquire_sample_rows, SampleRng, SampleSize};
use catalog::stats::ColumnStats;
use common::{PgError, PgResult, SqlState};
use types::{DataType, TypeId, Value};

use crate::ExecEnv;

/// Values wider than this are left out of the sort (analyze.c's
/// WIDTH_THRESHOLD): counted as distinct, not kept as MCV or bound.
const WIDTH_THRESHOLD: usize = 1024;

pub use sql::plan::AnalyzeTarget;

/// Runs ANALYZE over `targets` with the session's
/// default_statistics_target; `info` receives VERBOSE's INFO messages.
pub fn analyze(
    targets: &[AnalyzeTarget],
    verbose: bool,
    cx: &mut crate::commands::CommandContext,
    env: &mut ExecEnv,
    info: &mut dyn FnMut(PgError) -> PgResult<()>,
) -> PgResult<()> {
    let stats_target = env
        .hooks
        .current_setting("default_statistics_target", true)?
        .and_then(|v| v.parse::<u32>().ok())
        .unwrap_or(100);
    for t in targets {
        env.check_cancel()?;
        analyze_table(t, verbose, stats_target, cx, env, info)?;
    }
    Ok(())
}

fn info_msg(msg: String) -> PgError {
    PgError::new(SqlState::SUCCESSFUL_COMPLETION, msg).with_severity_info()
}

fn analyze_table(
    target: &AnalyzeTarget,
    verbose: bool,
    stats_target: u32,
    cx: &mut crate::commands::CommandContext,
    env: &mut ExecEnv,
    info: &mut dyn FnMut(PgError) -> PgResult<()>,
) -> PgResult<()> {
    let table = &target.0;
    let schema = env
        .catalog
        .namespaces
        .get(&table.namespace)
        .map_or("public", |n| n.name.as_str());
    if verbose {
        info(info_msg(format!("analyzing \"{schema}.{}\"", table.name)))?;
    }
    let columns: Vec<usize> = match &target.1 {
        Some(c) => c.clone(),
        None => (0..table.columns.len()).collect(),
    };
    let types = table.column_types();
    let toast = table.toast_source(env.pool);
    let targrows = 300 * stats_target.max(1) as usize;
    // Seeded from the clock: each ANALYZE draws a new sample, as PostgreSQL's.
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        ^ table.oid as u64;
    let mut size = SampleSize {
        targrows,
        rng: SampleRng::new(seed),
    };
    let last = columns.iter().copied().max().map_or(0, |c| c + 1);
    let mut row = Vec::new();
    let env_ref: &ExecEnv = env;
    let sample = acquire_sample_rows(
        env_ref.pool,
        table.locator(),
        env_ref.snapshot,
        env_ref.tm,
        &mut size,
        || env_ref.check_cancel(),
        |t| {
            row.clear();
            let mut d = access::tuple::Deformer::new(t, toast);
            d.deform_until(&types, last, &mut row)?;
            Ok(columns.iter().map(|&c| row[c].clone()).collect::<Vec<_>>())
        },
    )?;
    if verbose {
        info(info_msg(format!(
            "\"{}\": scanned {} of {} pages, containing {} live rows and 0 dead rows; {} rows in sample, {} estimated total rows",
            table.name,
            sample.total_blocks.min(targrows as u32),
            sample.total_blocks,
            sample.total_rows,
            sample.rows.len(),
            sample.total_rows
        )))?;
    }
    let mut stats = Vec::new();
    if !sample.rows.is_empty() {
        for (k, &c) in columns.iter().enumerate() {
            let values: Vec<&Value> = sample.rows.iter().map(|r| &r[k]).collect();
            stats.push(compute_scalar_stats(
                &values,
                types[c],
                c as i16 + 1,
                stats_target as usize,
                sample.total_rows,
            ));
        }
    }
    let relallvisible = access::heap::visibilitymap::count_all_visible(
        env.pool,
        table.locator(),
        sample.total_blocks,
    )?;
    let catalog = cx.catalog;
    let sizes = catalog::ClassSizes {
        reltuples: sample.total_rows,
        relpages: sample.total_blocks,
        relallvisible,
    };
    catalog.update_statistics(cx.changes(env)?, env.cid, table.oid, sizes, stats)?;
    if let Some(c) = env.hooks.counters_to_update(table.oid) {
        let autovacuum = env.hooks.is_autovacuum();
        c.report_analyze(
            sample.total_rows,
            autovacuum,
            types::datetime::now_timestamp(),
        );
    }
    Ok(())
}

/// Stored size of a value as PostgreSQL counts it for avg_width: the type's
/// length, or a varlena's size with its (1-byte when short) header.
pub fn stored_width(v: &Value, ty: DataType) -> (usize, bool) {
    // A 1-byte header when header and data fit in 127 bytes.
    let varlena = |n: usize| if n < 127 { n + 1 } else { n + 4 };
    match ty.id {
        TypeId::Bool => (1, false),
        TypeId::Int2 => (2, false),
        TypeId::Int4 | TypeId::Float4 | TypeId::Oid | TypeId::Date => (4, false),
        t if t.is_reg() => (4, false),
        TypeId::Int8 | TypeId::Float8 | TypeId::Timestamp | TypeId::Timestamptz => (8, false),
        TypeId::Name => (64, false),
        TypeId::Uuid => (16, false),
        TypeId::MacAddr => (6, false),
        TypeId::MacAddr8 | TypeId::Money => (8, false),
        TypeId::Interval => (16, false),
        TypeId::Numeric => {
            // Widths do not depend on the session's zone.
            let s = types::io::to_text(v, ty.id, &types::IoSettings::UTC);
            (varlena(2 + 2 * numeric_digit_groups(&s)), true)
        }
        _ => match v {
            Value::Text(s) => (varlena(s.len()), true),
            Value::Bytea(b) => (varlena(b.len()), true),
            other => (
                varlena(types::io::to_text(other, ty.id, &types::IoSettings::UTC).len()),
                true,
            ),
        },
    }
}

/// Base-10000 digit groups PostgreSQL stores for a numeric's text form
/// (leading and trailing zero groups stripped).
fn numeric_digit_groups(s: &str) -> usize {
    let s = s.trim_start_matches('-');
    if s.chars().any(|c| !c.is_ascii_digit() && c != '.') {
        return 0; // NaN, Infinity
    }
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let int = int.trim_start_matches('0');
    let frac = frac.trim_end_matches('0');
    if int.is_empty() && frac.is_empty() {
        return 0;
    }
    // Groups align on the decimal point.
    let mut digits: Vec<u8> = Vec::new();
    let pad_int = (4 - int.len() % 4) % 4;
    digits.extend(std::iter::repeat_n(b'0', pad_int));
    digits.extend(int.bytes());
    digits.extend(frac.bytes());
    digits.extend(std::iter::repeat_n(b'0', (4 - frac.len() % 4) % 4));
    let groups: Vec<&[u8]> = digits.chunks(4).collect();
    let zero = |g: &&[u8]| g.iter().all(|&b| b == b'0');
    let first = groups.iter().position(|g| !zero(g)).unwrap_or(groups.len());
    let last = groups.iter().rposition(|g| !zero(g)).map_or(0, |i| i + 1);
    last.saturating_sub(first)
}

/// compute_scalar_stats over one column's sampled values (nulls included,
/// in sample order); `total_rows` is the table's estimated row count.
pub fn compute_scalar_stats(
    sample: &[&Value],
    ty: DataType,
    attnum: i16,
    target: usize,
    total_rows: f64,
) -> ColumnStats {
    let samplerows = sample.len();
    let mut null_cnt = 0usize;
    let mut toowide_cnt = 0usize;
    let mut total_width = 0.0f64;
    let mut is_varwidth = false;
    // (value, sample position) of the values that get sorted.
    let mut values: Vec<(&Value, usize)> = Vec::with_capacity(samplerows);
    for v in sample {
        if v.is_null() {
            null_cnt += 1;
            continue;
        }
        let (w, varw) = stored_width(v, ty);
        is_varwidth = varw;
        total_width += w as f64;
        if varw && w > WIDTH_THRESHOLD {
            toowide_cnt += 1;
            continue;
        }
        // PostgreSQL numbers the sorted values by their order among the
        // non-null ones: that order is the "physical" side of correlation.
        values.push((v, values.len()));
    }
    let nonnull_cnt = samplerows - null_cnt;
    let null_frac = null_cnt as f64 / samplerows as f64;
    let fixed_width = stored_width(&Value::Null, ty);
    let mut stats = ColumnStats {
        attnum,
        data_type: ty,
        null_frac: null_frac as f32,
        avg_width: if fixed_width.1 {
            0
        } else {
            fixed_width.0 as i32
        },
        n_distinct: 0.0,
        mcv: Vec::new(),
        mcv_freqs: Vec::new(),
        histogram: Vec::new(),
        correlation: None,
    };
    if nonnull_cnt > 0 && is_varwidth {
        stats.avg_width = (total_width / nonnull_cnt as f64) as i32;
    }
    if values.is_empty() {
        // Only nulls (or only too-wide values): distinct count unknown.
        if nonnull_cnt > 0 {
            stats.n_distinct = -(1.0 - null_frac) as f32;
        }
        return stats;
    }
    let cmp = |a: &Value, b: &Value| types::ops::compare_typed(ty.id, a, b);
    values.sort_by(|a, b| cmp(a.0, b.0).then(a.1.cmp(&b.1)));

    // Runs of equal values: distinct count, repeated values, the MCV
    // candidates (count > 1, most common first, ties in value order).
    let num_mcv_target = target;
    let mut track: Vec<(usize, usize)> = Vec::new(); // (count, first index)
    let mut ndistinct = 0usize;
    let mut nmultiple = 0usize;
    let mut corr_xysum = 0.0f64;
    let mut run_start = 0usize;
    for i in 0..values.len() {
        corr_xysum += i as f64 * values[i].1 as f64;
        let end_of_run =
            i + 1 == values.len() || cmp(values[i].0, values[i + 1].0) != Ordering::Equal;
        if !end_of_run {
            continue;
        }
        ndistinct += 1;
        let dups = i + 1 - run_start;
        if dups > 1 {
            nmultiple += 1;
            if track.len() < num_mcv_target || dups > track.last().map_or(0, |t| t.0) {
                let pos = track.partition_point(|t| t.0 >= dups);
                track.insert(pos, (dups, run_start));
                track.truncate(num_mcv_target);
            }
        }
        run_start = i + 1;
    }

    let n_distinct = if nmultiple == 0 {
        // No repeats: a unique column, less its nulls.
        -(1.0 - null_frac)
    } else if toowide_cnt == 0 && nmultiple == ndistinct {
        // Every value repeated: assume these are all the values there are.
        ndistinct as f64
    } else {
        // Haas and Stokes' Duj1 estimator over the non-null values.
        let f1 = (ndistinct - nmultiple + toowide_cnt) as f64;
        let d = f1 + nmultiple as f64;
        let n = nonnull_cnt as f64;
        let big_n = total_rows * (1.0 - null_frac);
        let mut est = if big_n > 0.0 {
            (n * d) / ((n - f1) + f1 * n / big_n)
        } else {
            0.0
        };
        est = est.max(d).min(big_n);
        (est + 0.5).floor()
    };
    // Above 10% of the rows, store it as a fraction that scales with the table.
    let n_distinct = if n_distinct > 0.1 * total_rows {
        -(n_distinct / total_rows)
    } else {
        n_distinct
    };
    stats.n_distinct = n_distinct as f32;

    let num_mcv = if track.len() == ndistinct
        && toowide_cnt == 0
        && stats.n_distinct > 0.0
        && track.len() <= num_mcv_target
    {
        track.len()
    } else {
        let counts: Vec<usize> = track.iter().map(|t| t.0).collect();
        analyze_mcv_list(
            &counts,
            stats.n_distinct as f64,
            stats.null_frac as f64,
            samplerows,
            total_rows,
        )
    };
    let track = &track[..num_mcv];
    for &(count, first) in track {
        stats.mcv.push(values[first].0.clone());
        stats
            .mcv_freqs
            .push((count as f64 / samplerows as f64) as f32);
    }

    // Histogram of the values not in the MCV list.
    let num_bins = target;
    let mut num_hist = ndistinct.saturating_sub(num_mcv);
    if num_hist > num_bins {
        num_hist = num_bins + 1;
    }
    if num_hist >= 2 {
        let mut in_mcv = vec![false; values.len()];
        for &(count, first) in track {
            in_mcv[first..first + count]
                .iter_mut()
                .for_each(|x| *x = true);
        }
        let rest: Vec<&Value> = values
            .iter()
            .zip(&in_mcv)
            .filter(|(_, m)| !**m)
            .map(|(v, _)| v.0)
            .collect();
        let nvals = rest.len();
        for i in 0..num_hist {
            stats
                .histogram
                .push(rest[i * (nvals - 1) / (num_hist - 1)].clone());
        }
    }

    // Correlation of the sorted order with the physical (sample) order.
    let n = values.len();
    if n > 1 {
        let nf = n as f64;
        let xsum = (nf - 1.0) * nf / 2.0;
        let x2sum = (nf - 1.0) * nf * (2.0 * nf - 1.0) / 6.0;
        stats.correlation =
            Some(((nf * corr_xysum - xsum * xsum) / (nf * x2sum - xsum * xsum)) as f32);
    }
    stats
}

/// How many of the candidate MCVs (counts, most common first) are
/// significantly more common than the values left out would be
/// (analyze_mcv_list); all of them when the whole table was sampled.
pub fn analyze_mcv_list(
    counts: &[usize],
    stadistinct: f64,
    stanullfrac: f64,
    samplerows: usize,
    totalrows: f64,
) -> usize {
    let mut num_mcv = counts.len();
    if samplerows as f64 == totalrows || totalrows <= 1.0 {
        return num_mcv;
    }
    let ndistinct_table = if stadistinct < 0.0 {
        -stadistinct * totalrows
    } else {
        stadistinct
    };
    let n = samplerows as f64;
    let mut sumcount: f64 = counts.iter().take(num_mcv.saturating_sub(1)).sum::<usize>() as f64;
    while num_mcv > 0 {
        let mut selec = (1.0 - sumcount / n - stanullfrac).clamp(0.0, 1.0);
        let otherdistinct = ndistinct_table - (num_mcv - 1) as f64;
        if otherdistinct > 1.0 {
            selec /= otherdistinct;
        }
        let big_n = totalrows;
        let count = counts[num_mcv - 1] as f64;
        let k = big_n * count / n;
        let variance = n * k * (big_n - k) * (big_n - n) / (big_n * big_n * (big_n - 1.0));
        let stddev = variance.sqrt();
        if count > selec * n + 2.0 * stddev + 0.5 {
            break;
        }
        num_mcv -= 1;
        if num_mcv == 0 {
            break;
        }
        sumcount -= counts[num_mcv - 1] as f64;
    }
    num_mcv
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(v: &[Option<i32>]) -> Vec<Value> {
        v.iter()
            .map(|x| x.map_or(Value::Null, Value::Int4))
            .collect()
    }

    fn stats(v: &[Value], total: f64) -> ColumnStats {
        let refs: Vec<&Value> = v.iter().collect();
        compute_scalar_stats(&refs, DataType::new(TypeId::Int4), 1, 100, total)
    }

    #[test]
    fn unique_column_is_minus_one_less_nulls() {
        let mut v: Vec<Option<i32>> = (0..90).map(Some).collect();
        v.extend([None; 10]);
        let s = stats(&ints(&v), 100.0);
        assert_eq!(s.null_frac, 0.1);
        assert_eq!(s.n_distinct, -0.9);
        assert!(s.mcv.is_empty());
        assert_eq!(s.histogram.len(), 90);
        assert_eq!(s.histogram[0], Value::Int4(0));
        assert_eq!(s.histogram[89], Value::Int4(89));
        assert_eq!(s.correlation, Some(1.0));
        assert_eq!(s.avg_width, 4);
    }

    #[test]
    fn small_value_set_is_all_mcvs() {
        let v: Vec<Option<i32>> = (0..1000).map(|i| Some(i % 3)).collect();
        let s = stats(&ints(&v), 1000.0);
        assert_eq!(s.n_distinct, 3.0);
        assert_eq!(s.mcv, vec![Value::Int4(0), Value::Int4(1), Value::Int4(2)]);
        assert_eq!(s.mcv_freqs, vec![0.334, 0.333, 0.333]);
        assert!(s.histogram.is_empty());
    }

    #[test]
    fn haas_stokes_and_histogram_skip_mcvs() {
        // 0 five times, 1..=4 twice each, 100 singletons.
        let mut v: Vec<Option<i32>> = vec![Some(0); 5];
        for i in 1..=4 {
            v.extend([Some(i), Some(i)]);
        }
        v.extend((100..200).map(Some));
        // Sampled whole: every repeated value is an MCV.
        let s = stats(&ints(&v), v.len() as f64);
        assert_eq!(s.mcv.len(), 5);
        assert_eq!(s.mcv[0], Value::Int4(0));
        assert_eq!(s.histogram.len(), 100);
        assert_eq!(s.histogram[0], Value::Int4(100));
        // 105 distinct among 113 rows: stored as a fraction.
        assert_eq!(s.n_distinct, -(105.0f64 / 113.0) as f32);
        // The same sample from a 10x bigger table: Duj1 extrapolates.
        let s = stats(&ints(&v), 1130.0);
        let (n, d, f1, big_n) = (113.0f64, 105.0f64, 100.0f64, 1130.0f64);
        let est = ((n * d) / ((n - f1) + f1 * n / big_n) + 0.5).floor();
        assert_eq!(s.n_distinct, -(est / big_n) as f32);
        // Singletons are not significant enough to keep the twice-seen values.
        assert!(s.mcv.len() < 5, "{:?}", s.mcv);
    }

    #[test]
    fn histogram_takes_evenly_spaced_values() {
        let v: Vec<Option<i32>> = (0..1000).map(Some).collect();
        let s = stats(&ints(&v), 1000.0);
        assert_eq!(s.histogram.len(), 101);
        assert_eq!(s.histogram[1], Value::Int4(9));
        assert_eq!(s.histogram[100], Value::Int4(999));
    }

    #[test]
    fn widths_follow_postgres_storage() {
        let t = DataType::new(TypeId::Text);
        assert_eq!(stored_width(&Value::Text("abc".into()), t), (4, true));
        let n = DataType::new(TypeId::Numeric);
        let num = |s: &str| types::io::parse_text(n, s, &types::IoSettings::UTC).unwrap();
        assert_eq!(stored_width(&num("0"), n).0, 3);
        assert_eq!(stored_width(&num("12345"), n).0, 7);
        assert_eq!(stored_width(&num("1.5"), n).0, 7);
        assert_eq!(stored_width(&num("10000"), n).0, 5);
    }

    #[test]
    fn all_null_column() {
        let s = stats(&ints(&[None, None]), 2.0);
        assert_eq!(s.null_frac, 1.0);
        assert_eq!(s.n_distinct, 0.0);
        assert_eq!(s.avg_width, 4);
    }
}
