//! to_char: values formatted by a template (PostgreSQL's formatting.c).
//! `datetime.rs` lays out timestamps and intervals, `number.rs` numbers;
//! `parse.rs` reads them back (to_date, to_timestamp, to_number).

mod datetime;
mod number;
mod parse;

use std::cell::RefCell;
use std::rc::Rc;
use std::thread::LocalKey;

use common::{PgError, PgResult};

use super::{f, fs, BuiltinFunction};
use crate::datetime::{self as dt, DateTimeFields, TIMESTAMP_NOBEGIN, TIMESTAMP_NOEND};
use crate::numeric::Numeric;
use crate::{IoSettings, TypeId, Value};

use datetime::Moment;
use TypeId::{Float4, Float8, Int2, Int4, Int8, Interval, Text, Timestamp, Timestamptz};

pub(super) static BUILTINS: &[BuiltinFunction] = &[
    f("to_char", &[Timestamp, Text], Text, timestamp_to_char),
    fs("to_char", &[Timestamptz, Text], Text, timestamptz_to_char),
    f("to_char", &[Interval, Text], Text, interval_to_char),
    f("to_char", &[Int2, Text], Text, number_to_char),
    f("to_char", &[Int4, Text], Text, number_to_char),
    f("to_char", &[Int8, Text], Text, number_to_char),
    f("to_char", &[TypeId::Numeric, Text], Text, number_to_char),
    f("to_char", &[Float4, Text], Text, number_to_char),
    f("to_char", &[Float8, Text], Text, number_to_char),
    f("to_date", &[Text, Text], TypeId::Date, to_date),
    fs("to_timestamp", &[Text, Text], Timestamptz, to_timestamp),
    f("to_number", &[Text, Text], TypeId::Numeric, |a| {
        Ok(Value::numeric(parse::number(
            super::string::text(a, 0)?,
            template(a)?,
        )?))
    }),
];

fn to_date(args: &[Value]) -> PgResult<Value> {
    let input = super::string::text(args, 0)?;
    let f = parse::parse(input, template(args)?)?.fields(input)?;
    Ok(Value::Date(
        crate::datetime::date_from_ymd(f.year, f.month, f.day) as i32,
    ))
}

fn to_timestamp(args: &[Value], io: &IoSettings) -> PgResult<Value> {
    let input = super::string::text(args, 0)?;
    let p = parse::parse(input, template(args)?)?;
    let local = p.local_timestamp(input)?;
    Ok(Value::Timestamptz(match p.offset {
        Some(offset) => local - offset as i64 * 1_000_000,
        None => dt::local_to_tz(local, io.timezone),
    }))
}

/// A thread's recently read templates, the latest last: a query formats
/// row after row with the same template, read once (PostgreSQL's DCH and
/// NUM caches).
type TemplateCache<T> = RefCell<Vec<(String, Rc<T>)>>;

/// As PostgreSQL's DCH_CACHE_ENTRIES.
const TEMPLATE_CACHE_SIZE: usize = 20;

/// `template` read by `read`, or as it was read before.
fn cached<T>(
    cache: &'static LocalKey<TemplateCache<T>>,
    template: &str,
    read: impl FnOnce(&str) -> T,
) -> Rc<T> {
    cache.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some((_, read)) = cache.iter().rev().find(|(t, _)| t == template) {
            return Rc::clone(read);
        }
        let value = Rc::new(read(template));
        if cache.len() >= TEMPLATE_CACHE_SIZE {
            cache.remove(0);
        }
        cache.push((template.to_string(), Rc::clone(&value)));
        value
    })
}

fn template(args: &[Value]) -> PgResult<&str> {
    super::string::text(args, 1)
}

/// An empty template or an infinite value gives NULL, as in PostgreSQL.
fn finish(text: Option<String>) -> Value {
    match text {
        Some(t) => Value::Text(t),
        None => Value::Null,
    }
}

fn timestamp_to_char(args: &[Value]) -> PgResult<Value> {
    let Value::Timestamp(us) = args[0] else {
        return Err(PgError::internal("to_char of a non-timestamp"));
    };
    let t = template(args)?;
    if t.is_empty() || us == TIMESTAMP_NOBEGIN || us == TIMESTAMP_NOEND {
        return Ok(Value::Null);
    }
    Ok(finish(Some(datetime::format(
        &Moment::of_timestamp(us, None),
        t,
    ))))
}

fn timestamptz_to_char(args: &[Value], io: &IoSettings) -> PgResult<Value> {
    let Value::Timestamptz(us) = args[0] else {
        return Err(PgError::internal("to_char of a non-timestamptz"));
    };
    let t = template(args)?;
    if t.is_empty() || us == TIMESTAMP_NOBEGIN || us == TIMESTAMP_NOEND {
        return Ok(Value::Null);
    }
    let offset = io.timezone.offset_at_utc(us);
    let abbrev = io.timezone.display_abbreviation(us);
    let local = dt::tz_to_local(us, io.timezone);
    let m = Moment::of_timestamp(local, Some((offset, abbrev)));
    Ok(finish(Some(datetime::format(&m, t))))
}

fn interval_to_char(args: &[Value]) -> PgResult<Value> {
    let Value::Interval(iv) = &args[0] else {
        return Err(PgError::internal("to_char of a non-interval"));
    };
    let t = template(args)?;
    if t.is_empty() {
        return Ok(Value::Null);
    }
    let micros = iv.micros.unsigned_abs();
    let secs = micros / 1_000_000;
    let m = Moment {
        fields: DateTimeFields {
            year: (iv.months / 12) as i64,
            month: (iv.months % 12).unsigned_abs(),
            day: iv.days.unsigned_abs(),
            hour: (secs / 3600) as u32,
            minute: (secs / 60 % 60) as u32,
            second: (secs % 60) as u32,
            usec: (micros % 1_000_000) as u32,
        },
        days: 0,
        zone: None,
        interval: true,
    };
    Ok(finish(Some(datetime::format(&m, t))))
}

fn number_to_char(args: &[Value]) -> PgResult<Value> {
    let t = template(args)?;
    if t.is_empty() {
        return Ok(Value::Null);
    }
    let float = matches!(args[0], Value::Float4(_) | Value::Float8(_));
    let n = match &args[0] {
        Value::Int2(v) => Numeric::from_i64(*v as i64),
        Value::Int4(v) => Numeric::from_i64(*v as i64),
        Value::Int8(v) => Numeric::from_i64(*v),
        Value::Numeric(n) => (**n).clone(),
        Value::Float4(v) => Numeric::from_f32(*v),
        Value::Float8(v) => Numeric::from_f64(*v),
        other => return Err(PgError::internal(format!("to_char of {other:?}"))),
    };
    Ok(Value::Text(number::format(&n, t, float)?))
}
