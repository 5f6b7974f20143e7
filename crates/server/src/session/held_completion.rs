//! A result sink that keeps the statement's completion back: a statement
//! with data-modifying WITH queries reports its tag only once the queries
//! no reference ran have run (an error there replaces the completion).

use std::sync::Arc;

use common::{PgError, PgResult};
use types::{IoSettings, Value};

use crate::session_api::{ColumnDesc, RegOutput, ResultSink};

pub(super) struct HeldCompletion<'s> {
    pub sink: &'s mut dyn ResultSink,
    /// The tag the statement completed with.
    pub tag: Option<String>,
}

impl ResultSink for HeldCompletion<'_> {
    fn columns(&mut self, columns: &[ColumnDesc]) -> PgResult<()> {
        self.sink.columns(columns)
    }
    fn binary_columns(&mut self, columns: &[ColumnDesc]) -> PgResult<()> {
        self.sink.binary_columns(columns)
    }
    fn row(&mut self, row: &[Value]) -> PgResult<()> {
        self.sink.row(row)
    }
    fn complete(&mut self, tag: &str) -> PgResult<()> {
        self.tag = Some(tag.to_string());
        Ok(())
    }
    fn notice(&mut self, notice: &PgError) -> PgResult<()> {
        self.sink.notice(notice)
    }
    fn output_settings(&mut self, io: &IoSettings) {
        self.sink.output_settings(io)
    }
    fn output_names(&mut self, names: Arc<dyn RegOutput>) {
        self.sink.output_names(names)
    }
    fn output_encoding(&mut self, encoding: crate::protocol::ClientEncoding) {
        self.sink.output_encoding(encoding)
    }
    fn copy_out_start(
        &mut self,
        columns: usize,
        encoding: Option<types::encoding::PgEncoding>,
    ) -> PgResult<()> {
        self.sink.copy_out_start(columns, encoding)
    }
    fn copy_out_data(&mut self, data: &[u8]) -> PgResult<()> {
        self.sink.copy_out_data(data)
    }
    fn copy_out_done(&mut self) -> PgResult<()> {
        self.sink.copy_out_done()
    }
}
