//! PostgreSQL's character set encodings by name and number (pg_wchar.h's
//! `pg_enc`, encnames.c's names and aliases). The server encoding is always
//! UTF8; the others exist as client encodings and COPY's ENCODING option,
//! converted by the server's protocol layer.

/// An encoding, numbered as PostgreSQL numbers it (`pg_encoding_to_char`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PgEncoding {
    SqlAscii = 0,
    EucJp,
    EucCn,
    EucKr,
    EucTw,
    EucJis2004,
    Utf8,
    MuleInternal,
    Latin1,
    Latin2,
    Latin3,
    Latin4,
    Latin5,
    Latin6,
    Latin7,
    Latin8,
    Latin9,
    Latin10,
    Win1256,
    Win1258,
    Win866,
    Win874,
    Koi8R,
    Win1251,
    Win1252,
    Iso8859_5,
    Iso8859_6,
    Iso8859_7,
    Iso8859_8,
    Win1250,
    Win1253,
    Win1254,
    Win1255,
    Win1257,
    Koi8U,
    Sjis,
    Big5,
    Gbk,
    Uhc,
    Gb18030,
    Johab,
    ShiftJis2004,
}

use PgEncoding::*;

/// Every encoding, in number order.
const ALL: [PgEncoding; 42] = [
    SqlAscii,
    EucJp,
    EucCn,
    EucKr,
    EucTw,
    EucJis2004,
    Utf8,
    MuleInternal,
    Latin1,
    Latin2,
    Latin3,
    Latin4,
    Latin5,
    Latin6,
    Latin7,
    Latin8,
    Latin9,
    Latin10,
    Win1256,
    Win1258,
    Win866,
    Win874,
    Koi8R,
    Win1251,
    Win1252,
    Iso8859_5,
    Iso8859_6,
    Iso8859_7,
    Iso8859_8,
    Win1250,
    Win1253,
    Win1254,
    Win1255,
    Win1257,
    Koi8U,
    Sjis,
    Big5,
    Gbk,
    Uhc,
    Gb18030,
    Johab,
    ShiftJis2004,
];

/// Aliases beyond the canonical names, already cleaned (lower case,
/// letters and digits only), as encnames.c lists them.
const ALIASES: &[(&str, PgEncoding)] = &[
    ("abc", Win1258),
    ("alt", Win866),
    ("iso88591", Latin1),
    ("iso88592", Latin2),
    ("iso88593", Latin3),
    ("iso88594", Latin4),
    ("iso88599", Latin5),
    ("iso885910", Latin6),
    ("iso885913", Latin7),
    ("iso885914", Latin8),
    ("iso885915", Latin9),
    ("iso885916", Latin10),
    ("koi8", Koi8R),
    ("mskanji", Sjis),
    ("shiftjis", Sjis),
    ("tcvn", Win1258),
    ("tcvn5712", Win1258),
    ("unicode", Utf8),
    ("vscii", Win1258),
    ("win", Win1251),
    ("win932", Sjis),
    ("win936", Gbk),
    ("win949", Uhc),
    ("win950", Big5),
    ("windows1250", Win1250),
    ("windows1251", Win1251),
    ("windows1252", Win1252),
    ("windows1253", Win1253),
    ("windows1254", Win1254),
    ("windows1255", Win1255),
    ("windows1256", Win1256),
    ("windows1257", Win1257),
    ("windows1258", Win1258),
    ("windows866", Win866),
    ("windows874", Win874),
    ("windows932", Sjis),
    ("windows936", Gbk),
    ("windows949", Uhc),
    ("windows950", Big5),
];

impl PgEncoding {
    /// The canonical name (what SHOW client_encoding prints).
    pub fn name(self) -> &'static str {
        match self {
            SqlAscii => "SQL_ASCII",
            EucJp => "EUC_JP",
            EucCn => "EUC_CN",
            EucKr => "EUC_KR",
            EucTw => "EUC_TW",
            EucJis2004 => "EUC_JIS_2004",
            Utf8 => "UTF8",
            MuleInternal => "MULE_INTERNAL",
            Latin1 => "LATIN1",
            Latin2 => "LATIN2",
            Latin3 => "LATIN3",
            Latin4 => "LATIN4",
            Latin5 => "LATIN5",
            Latin6 => "LATIN6",
            Latin7 => "LATIN7",
            Latin8 => "LATIN8",
            Latin9 => "LATIN9",
            Latin10 => "LATIN10",
            Win1256 => "WIN1256",
            Win1258 => "WIN1258",
            Win866 => "WIN866",
            Win874 => "WIN874",
            Koi8R => "KOI8R",
            Win1251 => "WIN1251",
            Win1252 => "WIN1252",
            Iso8859_5 => "ISO_8859_5",
            Iso8859_6 => "ISO_8859_6",
            Iso8859_7 => "ISO_8859_7",
            Iso8859_8 => "ISO_8859_8",
            Win1250 => "WIN1250",
            Win1253 => "WIN1253",
            Win1254 => "WIN1254",
            Win1255 => "WIN1255",
            Win1257 => "WIN1257",
            Koi8U => "KOI8U",
            Sjis => "SJIS",
            Big5 => "BIG5",
            Gbk => "GBK",
            Uhc => "UHC",
            Gb18030 => "GB18030",
            Johab => "JOHAB",
            ShiftJis2004 => "SHIFT_JIS_2004",
        }
    }

    /// PostgreSQL's number for the encoding.
    pub fn number(self) -> i32 {
        self as i32
    }

    pub fn from_number(n: i64) -> Option<PgEncoding> {
        usize::try_from(n).ok().and_then(|i| ALL.get(i)).copied()
    }

    /// Looks a name up as PostgreSQL does: case and any character other
    /// than a letter or digit are ignored ("latin-1", "ISO_8859_1", "Unicode").
    pub fn from_name(name: &str) -> Option<PgEncoding> {
        let clean: String = name
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect();
        if clean.is_empty() {
            return None;
        }
        let canonical = |e: &PgEncoding| {
            e.name()
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .map(|c| c.to_ascii_lowercase())
                .eq(clean.chars())
        };
        ALL.iter()
            .find(|e| canonical(e))
            .or_else(|| ALIASES.iter().find(|(a, _)| *a == clean).map(|(_, e)| e))
            .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers() {
        for (i, e) in ALL.iter().enumerate() {
            assert_eq!(e.number(), i as i32);
            assert_eq!(PgEncoding::from_name(e.name()), Some(*e));
            assert_eq!(PgEncoding::from_number(i as i64), Some(*e));
        }
        assert_eq!(PgEncoding::from_name("latin1"), Some(Latin1));
        assert_eq!(PgEncoding::from_name("ISO-8859-1"), Some(Latin1));
        assert_eq!(PgEncoding::from_name("iso_8859_9"), Some(Latin5));
        assert_eq!(PgEncoding::from_name("Unicode"), Some(Utf8));
        assert_eq!(PgEncoding::from_name("win1252"), Some(Win1252));
        assert_eq!(PgEncoding::from_name("Windows-1251"), Some(Win1251));
        assert_eq!(PgEncoding::from_name("shift_jis"), Some(Sjis));
        assert_eq!(PgEncoding::from_name("sql_ascii"), Some(SqlAscii));
        assert_eq!(PgEncoding::from_name("bogus"), None);
        assert_eq!(PgEncoding::from_name(""), None);
        assert_eq!(PgEncoding::from_number(42), None);
        assert_eq!(PgEncoding::from_number(-1), None);
        assert_eq!(Sjis.number(), 35);
        assert_eq!(Gb18030.number(), 39);
    }
}
