//! to_char over numbers: PostgreSQL's NUM template patterns (9, 0, . and D,
//! , and G, S, MI, PL, SG, PR, L, V, EEEE, RN, TH, FM) as formatting.c lays
//! them out: one character per pattern character plus a sign position in
//! front of the first digit unless a sign pattern places the sign.

use common::{PgError, PgResult, SqlState};

use crate::numeric::Numeric;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Tok {
    Nine,
    Zero,
    Point,
    Group,
    /// S, MI, PL, SG: where a sign goes and which characters it uses.
    Sign(SignKind),
    /// PR: angle brackets around a negative value.
    Brackets,
    Currency,
    Multiply,
    Exponent,
    Roman {
        lower: bool,
    },
    Ordinal {
        upper: bool,
    },
    Literal(char),
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum SignKind {
    /// S: `+` or `-`.
    Both,
    /// MI: `-` or a space.
    Minus,
    /// PL: `+` or a space (the usual sign position stays).
    Plus,
    /// SG: `+` or `-` where written.
    Here,
}

struct Template {
    toks: Vec<Tok>,
    fill: bool,
}

fn parse(template: &str) -> Template {
    let chars: Vec<char> = template.chars().collect();
    let mut toks = Vec::new();
    let mut fill = false;
    let mut i = 0;
    let at = |i: usize, s: &str| {
        chars.len() >= i + s.len()
            && chars[i..i + s.len()]
                .iter()
                .zip(s.chars())
                .all(|(a, b)| a.eq_ignore_ascii_case(&b))
    };
    while i < chars.len() {
        let c = chars[i];
        let (tok, len) = match c {
            '9' => (Some(Tok::Nine), 1),
            '0' => (Some(Tok::Zero), 1),
            '.' => (Some(Tok::Point), 1),
            ',' => (Some(Tok::Group), 1),
            _ if at(i, "FM") => {
                fill = true;
                (None, 2)
            }
            _ if at(i, "EEEE") => (Some(Tok::Exponent), 4),
            _ if at(i, "MI") => (Some(Tok::Sign(SignKind::Minus)), 2),
            _ if at(i, "PL") => (Some(Tok::Sign(SignKind::Plus)), 2),
            _ if at(i, "SG") => (Some(Tok::Sign(SignKind::Here)), 2),
            _ if at(i, "PR") => (Some(Tok::Brackets), 2),
            _ if at(i, "RN") => (Some(Tok::Roman { lower: c == 'r' }), 2),
            _ if at(i, "TH") => (Some(Tok::Ordinal { upper: c == 'T' }), 2),
            'D' | 'd' => (Some(Tok::Point), 1),
            'G' | 'g' => (Some(Tok::Group), 1),
            'S' | 's' => (Some(Tok::Sign(SignKind::Both)), 1),
            'L' | 'l' => (Some(Tok::Currency), 1),
            'V' | 'v' => (Some(Tok::Multiply), 1),
            '"' => {
                let mut j = i + 1;
                while j < chars.len() && chars[j] != '"' {
                    toks.push(Tok::Literal(chars[j]));
                    j += 1;
                }
                (None, j + 1 - i)
            }
            c => (Some(Tok::Literal(c)), 1),
        };
        toks.extend(tok);
        i += len;
    }
    Template { toks, fill }
}

thread_local! {
    static TEMPLATES: super::TemplateCache<Template> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `value` laid out by `template`; a `float` value rounds its last digit
/// as C's printf does (ties to even), numeric ones half away from zero.
pub fn format(value: &Numeric, template: &str, float: bool) -> PgResult<String> {
    let t = super::cached(&TEMPLATES, template, parse);
    if t.toks.iter().filter(|k| **k == Tok::Point).count() > 1 {
        return Err(PgError::new(
            SqlState::SYNTAX_ERROR,
            "multiple decimal points",
        ));
    }
    if let Some(lower) = t.toks.iter().find_map(|k| match k {
        Tok::Roman { lower } => Some(*lower),
        _ => None,
    }) {
        return Ok(roman(value, lower, t.fill));
    }
    let digits_after = |toks: &[Tok]| {
        toks.iter()
            .filter(|k| matches!(k, Tok::Nine | Tok::Zero))
            .count()
    };
    let point = t.toks.iter().position(|k| *k == Tok::Point);
    let multiplier = t
        .toks
        .iter()
        .position(|k| *k == Tok::Multiply)
        .map_or(0, |v| digits_after(&t.toks[v..]));
    let (int_toks, frac_toks) = match point {
        Some(p) => (&t.toks[..p], &t.toks[p + 1..]),
        None => (&t.toks[..], &t.toks[..0]),
    };
    let pre = digits_after(int_toks);
    let post = digits_after(frac_toks);
    let scaled;
    let value = if multiplier > 0 {
        scaled = value
            .mul(&Numeric::parse(&format!("1{}", "0".repeat(multiplier))).expect("a power of ten"))
            .unwrap_or_else(|_| value.clone());
        &scaled
    } else {
        value
    };
    if t.toks.contains(&Tok::Exponent) {
        return Ok(exponent(value, post, t.fill));
    }
    let rounded = match float {
        true if value.is_finite() => Numeric::parse(&format!("{:.post$}", value.to_f64()))
            .unwrap_or_else(|_| value.round(post as i32)),
        _ => value.round(post as i32),
    };
    let negative = rounded.is_negative() && !rounded.is_zero();
    let mut text = String::new();
    rounded.abs().write_text(&mut text);
    let (mut int_digits, frac_digits) = match text.split_once('.') {
        Some((i, f)) => (i.to_string(), f.to_string()),
        None => (text, String::new()),
    };
    if int_digits == "0" && point.is_some() {
        int_digits.clear();
    }
    let overflow = int_digits.len() > pre || !rounded.is_finite();
    let own_sign = t.toks.iter().any(|k| {
        matches!(
            k,
            Tok::Brackets | Tok::Sign(SignKind::Both | SignKind::Minus | SignKind::Here)
        )
    });
    let brackets = t.toks.contains(&Tok::Brackets);
    // The sign at the usual position, in front of the first digit.
    let leading_sign: Option<char> = if brackets {
        Some(if negative { '<' } else { ' ' })
    } else if let Some(Tok::Sign(SignKind::Both)) = t
        .toks
        .iter()
        .find(|k| matches!(k, Tok::Sign(_) | Tok::Nine | Tok::Zero | Tok::Point))
    {
        Some(if negative { '-' } else { '+' })
    } else if own_sign {
        None
    } else if negative {
        Some('-')
    } else if t.fill {
        None
    } else {
        Some(' ')
    };
    let zero_start = int_toks
        .iter()
        .filter(|k| matches!(k, Tok::Nine | Tok::Zero))
        .position(|k| *k == Tok::Zero);
    let pad = |out: &mut String| {
        if !t.fill {
            out.push(' ');
        }
    };
    let mut out = String::new();
    let mut sign_done = leading_sign.is_none();
    let mut started = false;
    let mut digit_pos = 0usize;
    let mut seen_digit_tok = false;
    let place_sign = |out: &mut String, sign_done: &mut bool| {
        if !*sign_done {
            if let Some(s) = leading_sign {
                if s != ' ' || !t.fill {
                    out.push(s);
                }
            }
            *sign_done = true;
        }
    };
    let last_frac_nine = frac_toks.iter().rposition(|k| *k == Tok::Zero);
    let mut frac_pos = 0usize;
    let mut in_fraction = false;
    let mut fraction_start = 0usize;
    let mut trimmable_from: Option<usize> = None;
    for (idx, tok) in t.toks.iter().enumerate() {
        if Some(idx) == point {
            if overflow {
                out.push('.');
                in_fraction = true;
                continue;
            }
            place_sign(&mut out, &mut sign_done);
            if !(t.fill && post == 0) {
                out.push('.');
            }
            in_fraction = true;
            fraction_start = out.len();
            continue;
        }
        match *tok {
            Tok::Nine | Tok::Zero if in_fraction => {
                let d = if overflow {
                    '#'
                } else {
                    frac_digits.chars().nth(frac_pos).unwrap_or('0')
                };
                // In fill mode the trailing zeros of 9 positions go.
                if *tok == Tok::Nine && d == '0' && last_frac_nine.is_none_or(|z| frac_pos > z) {
                    trimmable_from.get_or_insert(out.len());
                } else {
                    trimmable_from = None;
                }
                out.push(d);
                frac_pos += 1;
            }
            Tok::Nine | Tok::Zero => {
                seen_digit_tok = true;
                let first_digit = pre - int_digits.len().min(pre);
                if overflow {
                    if !sign_done {
                        place_sign(&mut out, &mut sign_done);
                    }
                    out.push('#');
                } else if digit_pos >= first_digit {
                    place_sign(&mut out, &mut sign_done);
                    out.push(int_digits.as_bytes()[digit_pos - first_digit] as char);
                    started = true;
                } else if zero_start.is_some_and(|z| digit_pos >= z) {
                    place_sign(&mut out, &mut sign_done);
                    out.push('0');
                    started = true;
                } else {
                    pad(&mut out);
                }
                digit_pos += 1;
            }
            Tok::Group => {
                if in_fraction || started {
                    out.push(',');
                } else {
                    pad(&mut out);
                }
            }
            Tok::Sign(SignKind::Both) if !seen_digit_tok && point.is_none_or(|p| idx < p) => {
                // A leading S: its sign goes in front of the first digit.
            }
            Tok::Sign(SignKind::Both) | Tok::Sign(SignKind::Here) => {
                place_sign(&mut out, &mut sign_done);
                out.push(if negative { '-' } else { '+' });
            }
            Tok::Sign(SignKind::Minus) => {
                place_sign(&mut out, &mut sign_done);
                if negative {
                    out.push('-');
                } else if !t.fill {
                    out.push(' ');
                }
            }
            Tok::Sign(SignKind::Plus) => out.push(if negative { ' ' } else { '+' }),
            Tok::Brackets => {
                place_sign(&mut out, &mut sign_done);
                if negative {
                    out.push('>');
                } else if !t.fill {
                    out.push(' ');
                }
            }
            Tok::Currency => out.push(' '),
            Tok::Ordinal { upper } => {
                if !negative && rounded.is_integral() {
                    let n = rounded.to_i128_round().unwrap_or(0);
                    let n = (n % 100) as i64;
                    out.push_str(super::datetime::ordinal_suffix(n, upper));
                }
            }
            Tok::Literal(c) => out.push(c),
            // A second decimal point prints as written.
            Tok::Point => out.push('.'),
            Tok::Multiply | Tok::Exponent | Tok::Roman { .. } => {}
        }
    }
    place_sign(&mut out, &mut sign_done);
    if t.fill && !overflow {
        if let Some(from) = trimmable_from {
            let tail: String = out[from..].chars().filter(|c| *c != '0').collect();
            out.truncate(from.max(fraction_start));
            out.push_str(&tail);
        }
    }
    // Fill mode never leaves a number without a digit: zero is `0.`.
    if t.fill && !overflow && !out.chars().any(|c| c.is_ascii_digit()) {
        let at = out.find('.').unwrap_or(out.len());
        out.insert(at, '0');
    }
    Ok(out)
}

/// `9.99EEEE`: a mantissa with `post` decimals and a signed two-digit
/// (or longer) exponent.
fn exponent(value: &Numeric, post: usize, fill: bool) -> String {
    let v = value.to_f64();
    if !v.is_finite() {
        return format!(" {}", "#".repeat(post + 6));
    }
    let text = format!("{v:.post$e}");
    let (mantissa, exp) = text.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("an exponent");
    let sign = if mantissa.starts_with('-') || fill {
        ""
    } else {
        " "
    };
    format!(
        "{sign}{mantissa}e{}{:02}",
        if exp < 0 { '-' } else { '+' },
        exp.abs()
    )
}

/// RN: the value as a Roman numeral (1 to 3999), right-aligned in 15
/// characters unless FM; `#` otherwise.
fn roman(value: &Numeric, lower: bool, fill: bool) -> String {
    let n = value.round(0).to_i128_round().unwrap_or(0);
    if !(1..=3999).contains(&n) {
        return "#".repeat(15);
    }
    const PARTS: [(i128, &str); 13] = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ];
    let mut rest = n;
    let mut s = String::new();
    for (v, r) in PARTS {
        while rest >= v {
            s.push_str(r);
            rest -= v;
        }
    }
    if lower {
        s = s.to_ascii_lowercase();
    }
    if fill {
        s
    } else {
        format!("{s:>15}")
    }
}
