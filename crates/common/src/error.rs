//! Errors that reach a client carry a SQLSTATE, as PostgreSQL's ereport does.

use std::fmt;

/// A five-character SQLSTATE code.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SqlState(pub &'static str);

impl fmt::Debug for SqlState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl SqlState {
    pub const SUCCESSFUL_COMPLETION: SqlState = SqlState("00000");
    pub const WARNING: SqlState = SqlState("01000");
    pub const FEATURE_NOT_SUPPORTED: SqlState = SqlState("0A000");
    pub const INVALID_PARAMETER_VALUE: SqlState = SqlState("22023");
    pub const CARDINALITY_VIOLATION: SqlState = SqlState("21000");
    pub const STRING_DATA_RIGHT_TRUNCATION: SqlState = SqlState("22001");
    pub const NUMERIC_VALUE_OUT_OF_RANGE: SqlState = SqlState("22003");
    pub const NULL_VALUE_NOT_ALLOWED: SqlState = SqlState("22004");
    pub const DATETIME_FIELD_OVERFLOW: SqlState = SqlState("22008");
    pub const INVALID_DATETIME_FORMAT: SqlState = SqlState("22007");
    pub const DIVISION_BY_ZERO: SqlState = SqlState("22012");
    pub const INVALID_TEXT_REPRESENTATION: SqlState = SqlState("22P02");
    pub const INVALID_BINARY_REPRESENTATION: SqlState = SqlState("22P03");
    pub const INVALID_ESCAPE_SEQUENCE: SqlState = SqlState("22025");
    pub const INVALID_REGULAR_EXPRESSION: SqlState = SqlState("2201B");
    pub const ARRAY_SUBSCRIPT_ERROR: SqlState = SqlState("2202E");
    pub const INVALID_ROW_COUNT_IN_LIMIT: SqlState = SqlState("2201W");
    pub const INVALID_ROW_COUNT_IN_OFFSET: SqlState = SqlState("2201X");
    pub const INVALID_ARGUMENT_FOR_LOG: SqlState = SqlState("2201E");
    pub const INVALID_ARGUMENT_FOR_POWER: SqlState = SqlState("2201F");
    pub const NOT_NULL_VIOLATION: SqlState = SqlState("23502");
    pub const UNIQUE_VIOLATION: SqlState = SqlState("23505");
    pub const CHECK_VIOLATION: SqlState = SqlState("23514");
    pub const FOREIGN_KEY_VIOLATION: SqlState = SqlState("23503");
    /// 42830 invalid_foreign_key (no unique index matches the referenced keys).
    pub const INVALID_FOREIGN_KEY: SqlState = SqlState("42830");
    /// 54011 too_many_columns (an index over more than 32 columns).
    pub const TOO_MANY_COLUMNS_IN_INDEX: SqlState = SqlState("54011");
    pub const INVALID_TRANSACTION_STATE: SqlState = SqlState("25000");
    pub const ACTIVE_SQL_TRANSACTION: SqlState = SqlState("25001");
    pub const NO_ACTIVE_SQL_TRANSACTION: SqlState = SqlState("25P01");
    pub const IN_FAILED_SQL_TRANSACTION: SqlState = SqlState("25P02");
    pub const READ_ONLY_SQL_TRANSACTION: SqlState = SqlState("25006");
    pub const INVALID_SAVEPOINT_SPECIFICATION: SqlState = SqlState("3B001");
    pub const INVALID_SQL_STATEMENT_NAME: SqlState = SqlState("26000");
    pub const INVALID_CURSOR_NAME: SqlState = SqlState("34000");
    pub const OBJECT_NOT_IN_PREREQUISITE_STATE: SqlState = SqlState("55000");
    pub const LOCK_NOT_AVAILABLE: SqlState = SqlState("55P03");
    pub const INVALID_AUTHORIZATION_SPECIFICATION: SqlState = SqlState("28000");
    pub const INVALID_PASSWORD: SqlState = SqlState("28P01");
    pub const INVALID_CATALOG_NAME: SqlState = SqlState("3D000");
    pub const INVALID_SCHEMA_NAME: SqlState = SqlState("3F000");
    pub const SERIALIZATION_FAILURE: SqlState = SqlState("40001");
    pub const DEADLOCK_DETECTED: SqlState = SqlState("40P01");
    pub const SYNTAX_ERROR: SqlState = SqlState("42601");
    pub const INSUFFICIENT_PRIVILEGE: SqlState = SqlState("42501");
    pub const UNDEFINED_COLUMN: SqlState = SqlState("42703");
    pub const UNDEFINED_TABLE: SqlState = SqlState("42P01");
    pub const UNDEFINED_FUNCTION: SqlState = SqlState("42883");
    pub const UNDEFINED_OBJECT: SqlState = SqlState("42704");
    pub const UNDEFINED_PARAMETER: SqlState = SqlState("42P02");
    pub const DUPLICATE_TABLE: SqlState = SqlState("42P07");
    pub const SEQUENCE_GENERATOR_LIMIT_EXCEEDED: SqlState = SqlState("2200H");
    pub const DUPLICATE_SCHEMA: SqlState = SqlState("42P06");
    pub const RESERVED_NAME: SqlState = SqlState("42939");
    pub const INVALID_TABLE_DEFINITION: SqlState = SqlState("42P16");
    pub const INVALID_OBJECT_DEFINITION: SqlState = SqlState("42P17");
    pub const DEPENDENT_OBJECTS_STILL_EXIST: SqlState = SqlState("2BP01");
    pub const GENERATED_ALWAYS: SqlState = SqlState("428C9");
    pub const DUPLICATE_CURSOR: SqlState = SqlState("42P03");
    pub const DUPLICATE_COLUMN: SqlState = SqlState("42701");
    pub const DUPLICATE_DATABASE: SqlState = SqlState("42P04");
    pub const DUPLICATE_OBJECT: SqlState = SqlState("42710");
    pub const DUPLICATE_PREPARED_STATEMENT: SqlState = SqlState("42P05");
    pub const AMBIGUOUS_COLUMN: SqlState = SqlState("42702");
    pub const AMBIGUOUS_FUNCTION: SqlState = SqlState("42725");
    pub const DUPLICATE_FUNCTION: SqlState = SqlState("42723");
    pub const INVALID_FUNCTION_DEFINITION: SqlState = SqlState("42P13");
    /// PL/pgSQL's RAISE EXCEPTION without an ERRCODE.
    pub const RAISE_EXCEPTION: SqlState = SqlState("P0001");
    pub const NO_DATA_FOUND: SqlState = SqlState("P0002");
    pub const TOO_MANY_ROWS: SqlState = SqlState("P0003");
    pub const DATATYPE_MISMATCH: SqlState = SqlState("42804");
    pub const CANNOT_COERCE: SqlState = SqlState("42846");
    pub const GROUPING_ERROR: SqlState = SqlState("42803");
    pub const WINDOWING_ERROR: SqlState = SqlState("42P20");
    pub const INVALID_PRECEDING_OR_FOLLOWING_SIZE: SqlState = SqlState("22013");
    pub const INVALID_ARGUMENT_FOR_NTILE: SqlState = SqlState("22014");
    pub const INVALID_ARGUMENT_FOR_NTH_VALUE: SqlState = SqlState("22016");
    pub const INVALID_COLUMN_REFERENCE: SqlState = SqlState("42P10");
    pub const INVALID_RECURSION: SqlState = SqlState("42P19");
    pub const DUPLICATE_ALIAS: SqlState = SqlState("42712");
    pub const WRONG_OBJECT_TYPE: SqlState = SqlState("42809");
    pub const UNDEFINED_TYPE: SqlState = SqlState("42704");
    pub const INDETERMINATE_DATATYPE: SqlState = SqlState("42P18");
    pub const INVALID_NAME: SqlState = SqlState("42602");
    pub const NAME_TOO_LONG: SqlState = SqlState("42622");
    pub const OBJECT_IN_USE: SqlState = SqlState("55006");
    pub const CANT_CHANGE_RUNTIME_PARAM: SqlState = SqlState("55P02");
    pub const PROGRAM_LIMIT_EXCEEDED: SqlState = SqlState("54000");
    pub const STATEMENT_TOO_COMPLEX: SqlState = SqlState("54001");
    pub const TOO_MANY_CONNECTIONS: SqlState = SqlState("53300");
    pub const OUT_OF_MEMORY: SqlState = SqlState("53200");
    pub const CONFIGURATION_LIMIT_EXCEEDED: SqlState = SqlState("53400");
    pub const QUERY_CANCELED: SqlState = SqlState("57014");
    pub const ADMIN_SHUTDOWN: SqlState = SqlState("57P01");
    pub const CANNOT_CONNECT_NOW: SqlState = SqlState("57P03");
    pub const CONNECTION_FAILURE: SqlState = SqlState("08006");
    pub const IO_ERROR: SqlState = SqlState("58030");
    pub const UNDEFINED_FILE_OR_OBJECT: SqlState = SqlState("58P01");
    pub const PROTOCOL_VIOLATION: SqlState = SqlState("08P01");
    pub const INTERNAL_ERROR: SqlState = SqlState("XX000");
    pub const DATA_CORRUPTED: SqlState = SqlState("XX001");
    pub const INDEX_CORRUPTED: SqlState = SqlState("XX002");
}

/// Severity of a message sent to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Fatal,
    Notice,
    Warning,
    /// Sent whatever client_min_messages says (VACUUM/ANALYZE VERBOSE).
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "ERROR",
            Severity::Fatal => "FATAL",
            Severity::Notice => "NOTICE",
            Severity::Warning => "WARNING",
            Severity::Info => "INFO",
        }
    }
}

/// An error as PostgreSQL reports it: severity, SQLSTATE, message and optional fields.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct PgError {
    pub severity: Severity,
    pub code: SqlState,
    pub message: String,
    // Boxed strings keep PgResult's error variant small (clippy's
    // result_large_err): errors are rare, results everywhere.
    pub detail: Option<Box<str>>,
    pub hint: Option<Box<str>>,
    /// 1-based character position in the query string (syntax errors).
    pub position: Option<u32>,
    /// Where it happened (the `W` field: "COPY t, line 3, column a: ...").
    pub context: Option<Box<str>>,
    /// The object an integrity error is about (the `s`, `t`, `c` and `n`
    /// fields drivers map errors to models and constraints by).
    pub object: Option<Box<ErrorObject>>,
}

/// The schema, table, column and constraint an error names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorObject {
    pub schema: String,
    pub table: String,
    pub column: Option<String>,
    pub constraint: Option<String>,
}

impl PgError {
    pub fn new(code: SqlState, message: impl Into<String>) -> Self {
        PgError {
            severity: Severity::Error,
            code,
            message: message.into(),
            detail: None,
            hint: None,
            position: None,
            context: None,
            object: None,
        }
    }
    pub fn fatal(code: SqlState, message: impl Into<String>) -> Self {
        PgError {
            severity: Severity::Fatal,
            ..PgError::new(code, message)
        }
    }
    /// The same message at INFO severity.
    pub fn with_severity_info(mut self) -> Self {
        self.severity = Severity::Info;
        self
    }
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into().into_boxed_str());
        self
    }
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into().into_boxed_str());
        self
    }
    pub fn with_context(mut self, context: impl Into<String>) -> Self {
        self.context = Some(context.into().into_boxed_str());
        self
    }
    /// Names the constraint of table `schema.table` the error is about.
    pub fn with_constraint(mut self, schema: &str, table: &str, constraint: &str) -> Self {
        self.object = Some(Box::new(ErrorObject {
            schema: schema.into(),
            table: table.into(),
            column: None,
            constraint: Some(constraint.into()),
        }));
        self
    }
    /// Names the column of table `schema.table` the error is about.
    pub fn with_column(mut self, schema: &str, table: &str, column: &str) -> Self {
        self.object = Some(Box::new(ErrorObject {
            schema: schema.into(),
            table: table.into(),
            column: Some(column.into()),
            constraint: None,
        }));
        self
    }
    /// Names the table `schema.table` the error is about.
    pub fn with_table(mut self, schema: &str, table: &str) -> Self {
        self.object = Some(Box::new(ErrorObject {
            schema: schema.into(),
            table: table.into(),
            column: None,
            constraint: None,
        }));
        self
    }
    pub fn with_position(mut self, position: u32) -> Self {
        self.position = Some(position);
        self
    }
    pub fn syntax(message: impl Into<String>) -> Self {
        PgError::new(SqlState::SYNTAX_ERROR, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        PgError::new(SqlState::INTERNAL_ERROR, message)
    }
    pub fn unsupported(message: impl Into<String>) -> Self {
        PgError::new(SqlState::FEATURE_NOT_SUPPORTED, message)
    }
    pub fn io(context: impl std::fmt::Display, err: std::io::Error) -> Self {
        PgError::new(SqlState::IO_ERROR, format!("{context}: {err}"))
    }
}

pub type PgResult<T> = Result<T, PgError>;
