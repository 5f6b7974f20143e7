//! pg_statistic rows: what ANALYZE found about one column.
//!
//! Values are typed `Value`s in memory. In the pg_statistic row they are
//! kept (as JSON in one text column) in a stable text form: the type's output text, except dates and timestamps,
//! kept as their integer day/microsecond counts so that the session time
//! zone and DateStyle cannot change what is read back.

use common::{Oid, PgResult};
use serde::{Deserialize, Serialize};
use types::{DataType, TypeId, Value};

/// One column's statistics (PostgreSQL's pg_statistic row with the MCV,
/// histogram and correlation slots). Fractions are float4, as there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Stored", into = "Stored")]
pub struct ColumnStats {
    /// 1-based column number.
    pub attnum: i16,
    /// The column's type when analysed: the values below are of this type.
    pub data_type: DataType,
    pub null_frac: f32,
    pub avg_width: i32,
    /// > 0: distinct values; < 0: minus their fraction of the rows; 0: unknown.
    pub n_distinct: f32,
    /// Most common values, most common first, with their frequencies.
    pub mcv: Vec<Value>,
    pub mcv_freqs: Vec<f32>,
    /// Equi-depth histogram bounds of the values not in `mcv`, ascending.
    pub histogram: Vec<Value>,
    pub correlation: Option<f32>,
}

/// Whether a table has no statistics (then the field is left out).
#[derive(Serialize, Deserialize)]
struct Stored {
    attnum: i16,
    type_oid: Oid,
    typmod: i32,
    null_frac: f32,
    avg_width: i32,
    n_distinct: f32,
    #[serde(default)]
    mcv: Vec<String>,
    #[serde(default)]
    mcv_freqs: Vec<f32>,
    #[serde(default)]
    histogram: Vec<String>,
    #[serde(default)]
    correlation: Option<f32>,
}

fn encode(v: &Value, ty: TypeId) -> String {
    match v {
        Value::Date(d) => d.to_string(),
        Value::Timestamp(t) | Value::Timestamptz(t) => t.to_string(),
        // Zone-free: stored statistics read back the same in every session.
        other => types::io::to_text(other, ty, &types::IoSettings::UTC),
    }
}

fn decode(s: &str, ty: DataType) -> PgResult<Value> {
    let int = |s: &str| {
        s.parse::<i64>()
            .map_err(|e| common::PgError::internal(format!("bad statistics value {s:?}: {e}")))
    };
    Ok(match ty.id {
        TypeId::Date => Value::Date(int(s)? as i32),
        TypeId::Timestamp => Value::Timestamp(int(s)?),
        TypeId::Timestamptz => Value::Timestamptz(int(s)?),
        // Stored values were already within the typmod.
        _ => types::io::parse_text(DataType::new(ty.id), s, &types::IoSettings::UTC)?,
    })
}

impl From<ColumnStats> for Stored {
    fn from(c: ColumnStats) -> Stored {
        let ty = c.data_type.id;
        Stored {
            attnum: c.attnum,
            type_oid: ty.oid(),
            typmod: c.data_type.typmod,
            null_frac: c.null_frac,
            avg_width: c.avg_width,
            n_distinct: c.n_distinct,
            mcv: c.mcv.iter().map(|v| encode(v, ty)).collect(),
            mcv_freqs: c.mcv_freqs,
            histogram: c.histogram.iter().map(|v| encode(v, ty)).collect(),
            correlation: c.correlation,
        }
    }
}

impl TryFrom<Stored> for ColumnStats {
    type Error = String;
    fn try_from(s: Stored) -> Result<ColumnStats, String> {
        let id = TypeId::from_oid(s.type_oid).ok_or_else(|| format!("type {}", s.type_oid))?;
        let ty = DataType::with_typmod(id, s.typmod);
        let values = |v: &[String]| {
            v.iter()
                .map(|x| decode(x, ty).map_err(|e| e.message))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(ColumnStats {
            attnum: s.attnum,
            data_type: ty,
            null_frac: s.null_frac,
            avg_width: s.avg_width,
            n_distinct: s.n_distinct,
            mcv: values(&s.mcv)?,
            mcv_freqs: s.mcv_freqs,
            histogram: values(&s.histogram)?,
            correlation: s.correlation,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_survive_the_stored_row() {
        let s = ColumnStats {
            attnum: 2,
            data_type: DataType::new(TypeId::Timestamptz),
            null_frac: 0.25,
            avg_width: 8,
            n_distinct: -0.5,
            mcv: vec![Value::Timestamptz(86_400_000_000)],
            mcv_freqs: vec![0.125],
            histogram: vec![Value::Timestamptz(-5), Value::Timestamptz(7)],
            correlation: Some(-0.75),
        };
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.contains("\"86400000000\""), "{json}");
        let back: ColumnStats = serde_json::from_str(&json).unwrap();
        assert_eq!(back, s);
        let t = ColumnStats {
            data_type: DataType::new(TypeId::Text),
            mcv: vec![Value::Text("a\"b".into())],
            histogram: vec![],
            correlation: None,
            ..s
        };
        let back: ColumnStats = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(back, t);
    }
}
