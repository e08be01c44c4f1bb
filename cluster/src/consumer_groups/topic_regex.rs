//! SubscribedTopicRegex as Kafka 4.4's group coordinator reads it: an RE2J pattern
//! (`com.google.re2j.Pattern`), refused with INVALID_REGULAR_EXPRESSION and Kafka's message
//! when RE2J refuses it, and matched against whole topic names (`Matcher.matches`).
//!
//! The `regex` crate is of the same RE2 family but reads some patterns otherwise, so a
//! pattern is first read as RE2J reads it and rewritten into the crate's syntax: `\Q…\E`
//! quoting; octal escapes; `\d`, `\s`, `\w` and `\b` ASCII-only; a `{` that is no repeat
//! count taken as a literal (`x{,3}`); `&&`, `--`, `~~` and a nested `[` in a class taken as
//! literals; an escaped punctuation character (`\<`) a literal. What RE2J refuses and the
//! crate would take (`(?x)`, `a**`, `\e`, `\u00e9`, repeat counts over 1000, …) is refused
//! with RE2J's description, the facts of `cluster/tests/data/re2j.tsv` (from Kafka's own
//! code, `tools/regex-reference`).

use regex::Regex;

/// RE2J's descriptions (`PatternSyntaxException.getDescription`).
const MISSING_PAREN: &str = "missing closing )";
const UNEXPECTED_PAREN: &str = "regexp/syntax: internal error";
const MISSING_BRACKET: &str = "missing closing ]";
const MISSING_REPEAT_ARGUMENT: &str = "missing argument to repetition operator";
const NESTED_REPEAT: &str = "invalid nested repetition operator";
const REPEAT_SIZE: &str = "invalid repeat count";
const TRAILING_BACKSLASH: &str = "trailing backslash at end of expression";
const INVALID_ESCAPE: &str = "invalid escape sequence";
const INVALID_PERL: &str = "invalid or unsupported Perl syntax";
const INVALID_NAMED_CAPTURE: &str = "invalid named capture";
const INVALID_RANGE: &str = "invalid character class range";

/// RE2's limit on a repeat count.
const MAX_REPEAT: u32 = 1000;
/// The most memory one compiled pattern may take (the crate's limit; RE2J has none).
const SIZE_LIMIT: usize = 1 << 20;

/// The POSIX classes RE2J knows (`[[:alpha:]]`).
const POSIX: [&str; 14] = [
    "alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower", "print", "punct",
    "space", "upper", "word", "xdigit",
];

/// Compiles `pattern` as Kafka does (`Utils.throwIfRegularExpressionIsInvalid`): the
/// pattern, matching whole topic names, or Kafka's INVALID_REGULAR_EXPRESSION message.
pub fn compile(pattern: &str) -> Result<Regex, String> {
    let refused = |description: &str| {
        format!(
            "SubscribedTopicRegex `{pattern}` is not a valid regular expression: {description}."
        )
    };
    let translated = translate(pattern).map_err(refused)?;
    regex::RegexBuilder::new(&format!("^(?:{translated})$"))
        .size_limit(SIZE_LIMIT)
        .build()
        .map_err(|error| match error {
            // RE2J has no size limit; the crate's is this cluster's own bound.
            regex::Error::CompiledTooBig(_) => refused("expression too large"),
            _ => refused(INVALID_PERL),
        })
}

/// What the last item written was, for the repetition checks.
#[derive(Clone, Copy, PartialEq)]
enum Last {
    /// Nothing to repeat: the start, `(`, `|`.
    Nothing,
    /// Something a repetition may follow.
    Atom,
    /// A repetition (a further one is nested).
    Repeat,
}

/// Rewrites an RE2J pattern into the `regex` crate's syntax, or RE2J's description of why
/// it refuses it.
fn translate(pattern: &str) -> Result<String, &'static str> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() * 2);
    let mut at = 0;
    let mut depth = 0usize;
    let mut last = Last::Nothing;
    while at < chars.len() {
        let c = chars[at];
        at += 1;
        match c {
            '\\' => {
                let (text, next, kind) = escape(&chars, at, false)?;
                out.push_str(&text);
                at = next;
                last = kind;
            }
            '(' => {
                if chars.get(at) == Some(&'?') {
                    at = group_flags(&chars, at + 1, &mut out)?;
                    if out.ends_with(')') {
                        // A flag setting alone, `(?i)`: nothing to repeat after it.
                        last = Last::Nothing;
                        continue;
                    }
                } else {
                    out.push('(');
                }
                depth += 1;
                last = Last::Nothing;
            }
            ')' => {
                if depth == 0 {
                    return Err(UNEXPECTED_PAREN);
                }
                depth -= 1;
                out.push(')');
                last = Last::Atom;
            }
            '|' => {
                out.push('|');
                last = Last::Nothing;
            }
            '*' | '+' | '?' => {
                match last {
                    Last::Nothing => return Err(MISSING_REPEAT_ARGUMENT),
                    Last::Repeat => return Err(NESTED_REPEAT),
                    Last::Atom => {}
                }
                out.push(c);
                if chars.get(at) == Some(&'?') {
                    out.push('?');
                    at += 1;
                }
                last = Last::Repeat;
            }
            '{' => match repeat_count(&chars, at)? {
                Some((text, next)) => {
                    match last {
                        Last::Nothing => return Err(MISSING_REPEAT_ARGUMENT),
                        Last::Repeat => return Err(NESTED_REPEAT),
                        Last::Atom => {}
                    }
                    out.push_str(&text);
                    at = next;
                    if chars.get(at) == Some(&'?') {
                        out.push('?');
                        at += 1;
                    }
                    last = Last::Repeat;
                }
                None => {
                    out.push_str("\\{");
                    last = Last::Atom;
                }
            },
            '[' => {
                at = class(&chars, at, &mut out)?;
                last = Last::Atom;
            }
            '^' | '$' => {
                out.push(c);
                last = Last::Atom;
            }
            '.' => {
                out.push('.');
                last = Last::Atom;
            }
            _ => {
                out.push_str(&regex::escape(&c.to_string()));
                last = Last::Atom;
            }
        }
    }
    if depth > 0 {
        return Err(MISSING_PAREN);
    }
    Ok(out)
}

/// After `(?`: a named group, or flags (`imsU`, one `-`) alone or for a group. Returns
/// where reading goes on; writes the crate's form.
fn group_flags(chars: &[char], mut at: usize, out: &mut String) -> Result<usize, &'static str> {
    let rest: String = chars[at..].iter().take(3).collect();
    if rest.starts_with("P<")
        || (rest.starts_with('<') && !rest.starts_with("<=") && !rest.starts_with("<!"))
    {
        let start = at + if rest.starts_with('P') { 2 } else { 1 };
        let end = chars[start..]
            .iter()
            .position(|c| *c == '>')
            .map(|offset| start + offset)
            .ok_or(INVALID_NAMED_CAPTURE)?;
        let name: String = chars[start..end].iter().collect();
        if name.is_empty() || !name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric()) {
            return Err(INVALID_NAMED_CAPTURE);
        }
        out.push_str(&format!("(?P<{name}>"));
        return Ok(end + 1);
    }
    if rest.starts_with('<') {
        // Look-behind: RE2J reads `(?<` as a named capture and finds no valid name.
        return Err(INVALID_NAMED_CAPTURE);
    }
    let mut flags = String::new();
    let mut negated = false;
    loop {
        let Some(&c) = chars.get(at) else {
            return Err(MISSING_PAREN);
        };
        at += 1;
        match c {
            'i' | 'm' | 's' | 'U' => flags.push(c),
            '-' if !negated => {
                negated = true;
                flags.push('-');
            }
            ':' | ')' => {
                if negated && flags.ends_with('-') {
                    return Err(INVALID_PERL);
                }
                if flags.is_empty() {
                    // `(?)` sets nothing; `(?:` is a plain non-capturing group.
                    out.push_str(if c == ')' { "" } else { "(?:" });
                    if c == ')' {
                        out.push_str("(?:)");
                    }
                } else {
                    out.push_str(&format!("(?{flags}{c}"));
                }
                return Ok(at);
            }
            _ => return Err(INVALID_PERL),
        }
    }
}

/// At `{`: a repeat count RE2J takes (`{n}`, `{n,}`, `{n,m}`, each at most 1000, `n <= m`),
/// written out with where reading goes on; `None` when it is a literal `{`.
fn repeat_count(chars: &[char], at: usize) -> Result<Option<(String, usize)>, &'static str> {
    let Some(close) = chars[at..].iter().position(|c| *c == '}') else {
        return Ok(None);
    };
    let inside: String = chars[at..at + close].iter().collect();
    let number = |text: &str| -> Option<Option<u32>> {
        if text.is_empty() {
            return Some(None);
        }
        if !text.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        // Past 1000 either way: RE2J refuses it.
        Some(Some(text.parse::<u32>().unwrap_or(u32::MAX)))
    };
    let (min, max) = match inside.split_once(',') {
        None => match number(&inside) {
            Some(Some(n)) => (n, Some(n)),
            _ => return Ok(None),
        },
        Some((low, high)) => match (number(low), number(high)) {
            (Some(Some(low)), Some(high)) => (low, high),
            _ => return Ok(None),
        },
    };
    if min > MAX_REPEAT || max.is_some_and(|max| max > MAX_REPEAT || max < min) {
        return Err(REPEAT_SIZE);
    }
    let text = match max {
        Some(max) if max == min && !inside.contains(',') => format!("{{{min}}}"),
        Some(max) => format!("{{{min},{max}}}"),
        None => format!("{{{min},}}"),
    };
    Ok(Some((text, at + close + 1)))
}

/// The ASCII classes RE2J's `\d`, `\s`, `\w` stand for (negated: upper case).
fn perl_class(c: char) -> Option<&'static str> {
    Some(match c {
        'd' => "[0-9]",
        'D' => "[^0-9]",
        's' => "[\\t\\n\\f\\r ]",
        'S' => "[^\\t\\n\\f\\r ]",
        'w' => "[0-9A-Za-z_]",
        'W' => "[^0-9A-Za-z_]",
        _ => return None,
    })
}

/// After `\` (in a class when `in_class`): the crate's form, where reading goes on, and
/// what it was. A single character escaped is written as that character's literal.
fn escape(
    chars: &[char],
    at: usize,
    in_class: bool,
) -> Result<(String, usize, Last), &'static str> {
    let Some(&c) = chars.get(at) else {
        return Err(TRAILING_BACKSLASH);
    };
    let literal = |value: u32| format!("\\x{{{value:X}}}");
    let mut next = at + 1;
    let text = match c {
        'Q' if !in_class => {
            // Quoted up to `\E` or the end.
            let rest: String = chars[next..].iter().collect();
            let (quoted, used) = match rest.find("\\E") {
                Some(end) => (&rest[..end], rest[..end].chars().count() + 2),
                None => (rest.as_str(), rest.chars().count()),
            };
            next += used;
            if quoted.is_empty() {
                // Nothing quoted: nothing written, nothing to repeat.
                return Ok((String::new(), next, Last::Nothing));
            }
            regex::escape(quoted)
        }
        '1'..='7' | '0' => {
            // RE2's octal escapes: `\0`, or up to three octal digits where the first is
            // not 0 only when another follows (`\1` alone would be a back-reference).
            let mut value = c.to_digit(8).expect("an octal digit");
            if c != '0' && !chars.get(next).is_some_and(|d| d.is_digit(8)) {
                return Err(INVALID_ESCAPE);
            }
            for _ in 0..2 {
                match chars.get(next).and_then(|d| d.to_digit(8)) {
                    Some(digit) => {
                        value = value * 8 + digit;
                        next += 1;
                    }
                    None => break,
                }
            }
            literal(value)
        }
        'x' => {
            let (digits, used) = if chars.get(next) == Some(&'{') {
                let close = chars[next..]
                    .iter()
                    .position(|c| *c == '}')
                    .ok_or(INVALID_ESCAPE)?;
                (
                    chars[next + 1..next + close].iter().collect::<String>(),
                    close + 1,
                )
            } else {
                (
                    chars[next..chars.len().min(next + 2)]
                        .iter()
                        .collect::<String>(),
                    2,
                )
            };
            if digits.is_empty()
                || digits.len() > 8
                || !digits.chars().all(|d| d.is_ascii_hexdigit())
            {
                return Err(INVALID_ESCAPE);
            }
            let value = u32::from_str_radix(&digits, 16).map_err(|_| INVALID_ESCAPE)?;
            if char::from_u32(value).is_none() {
                return Err(INVALID_ESCAPE);
            }
            next += used;
            literal(value)
        }
        'a' => literal(7),
        'f' => literal(12),
        't' => literal(9),
        'n' => literal(10),
        'r' => literal(13),
        'v' => literal(11),
        'A' | 'z' | 'b' | 'B' if !in_class => {
            let assertion = match c {
                'A' => "\\A".to_string(),
                'z' => "\\z".to_string(),
                // RE2J's word boundaries are ASCII ones.
                'b' => "(?-u:\\b)".to_string(),
                _ => "(?-u:\\B)".to_string(),
            };
            return Ok((assertion, next, Last::Atom));
        }
        'd' | 'D' | 's' | 'S' | 'w' | 'W' => perl_class(c).expect("a Perl class").to_string(),
        'p' | 'P' => {
            let (name, used) = if chars.get(next) == Some(&'{') {
                let close = chars[next..]
                    .iter()
                    .position(|c| *c == '}')
                    .ok_or(INVALID_RANGE)?;
                (
                    chars[next + 1..next + close].iter().collect::<String>(),
                    close + 1,
                )
            } else {
                (
                    chars.get(next).map(char::to_string).ok_or(INVALID_RANGE)?,
                    1,
                )
            };
            next += used;
            let bare = name.strip_prefix('^').unwrap_or(&name);
            // RE2J knows `Any`, the general categories (`L`, `Lu`) and the script names
            // (`Greek`, `Old_Italic`); the crate knows more (`Letter`, `gc=L`).
            let known = bare == "Any"
                || (bare.len() <= 2
                    && bare.starts_with(|c: char| c.is_ascii_uppercase())
                    && bare.chars().skip(1).all(|c| c.is_ascii_lowercase()))
                || bare.split('_').all(|word| {
                    word.starts_with(|c: char| c.is_ascii_uppercase())
                        && word.chars().skip(1).all(|c| c.is_ascii_lowercase())
                });
            if !known {
                return Err(INVALID_RANGE);
            }
            let text = format!("\\{c}{{{name}}}");
            if Regex::new(&text).is_err() {
                return Err(INVALID_RANGE);
            }
            text
        }
        c if c.is_ascii_punctuation() => regex::escape(&c.to_string()),
        _ => return Err(INVALID_ESCAPE),
    };
    Ok((text, next, Last::Atom))
}

/// After `[`: a class as RE2J reads it, written in the crate's syntax; where reading goes
/// on.
fn class(chars: &[char], mut at: usize, out: &mut String) -> Result<usize, &'static str> {
    out.push('[');
    if chars.get(at) == Some(&'^') {
        out.push('^');
        at += 1;
    }
    let mut first = true;
    // The previous item, when a single character (a range may start from it).
    let mut previous: Option<u32> = None;
    loop {
        let Some(&c) = chars.get(at) else {
            return Err(MISSING_BRACKET);
        };
        at += 1;
        if c == ']' && !first {
            out.push(']');
            return Ok(at);
        }
        first = false;
        // A range `lo-hi`: `-` between two single characters, not last.
        if c == '-' && previous.is_some() && chars.get(at).is_some_and(|n| *n != ']') {
            let (hi, next) = class_char(chars, at)?;
            let lo = previous.take().expect("checked above");
            match hi {
                Item::Char(hi, text) if hi >= lo => {
                    out.push('-');
                    out.push_str(&text);
                    at = next;
                    continue;
                }
                _ => return Err(INVALID_RANGE),
            }
        }
        if c == '[' && chars.get(at) == Some(&':') {
            // A POSIX class, `[:alpha:]` or `[:^alpha:]`.
            let rest: String = chars[at + 1..].iter().collect();
            if let Some(end) = rest.find(":]") {
                let name = &rest[..end];
                if POSIX.contains(&name.strip_prefix('^').unwrap_or(name)) {
                    out.push_str(&format!("[:{name}:]"));
                    at += 1 + name.chars().count() + 2;
                    previous = None;
                    continue;
                }
                return Err(INVALID_RANGE);
            }
        }
        let (item, next) = class_char(chars, at - 1)?;
        at = next;
        match item {
            Item::Char(value, text) => {
                out.push_str(&text);
                previous = Some(value);
            }
            Item::Set(text) => {
                out.push_str(&text);
                previous = None;
            }
        }
    }
}

/// One item of a class.
enum Item {
    /// A single character: its value and the crate's form (escaped, so that `&&`, `--`,
    /// `~~` and `[` stay literal).
    Char(u32, String),
    /// A set (`\d`, `\pL`), in the crate's form.
    Set(String),
}

/// One item of a class at `at`, and where reading goes on.
fn class_char(chars: &[char], at: usize) -> Result<(Item, usize), &'static str> {
    let c = chars[at];
    if c != '\\' {
        return Ok((
            Item::Char(c as u32, format!("\\x{{{:X}}}", c as u32)),
            at + 1,
        ));
    }
    let Some(&e) = chars.get(at + 1) else {
        return Err(MISSING_BRACKET);
    };
    let (text, next, _) = escape(chars, at + 1, true)?;
    let value = text
        .strip_prefix("\\x{")
        .and_then(|hex| hex.strip_suffix('}'))
        .and_then(|hex| u32::from_str_radix(hex, 16).ok());
    let item = match value {
        Some(value) if !matches!(e, 'p' | 'P' | 'd' | 'D' | 's' | 'S' | 'w' | 'W') => {
            Item::Char(value, text)
        }
        // An escaped punctuation character: itself.
        None if text.chars().count() <= 2 && !matches!(e, 'p' | 'P') => Item::Char(e as u32, text),
        _ => Item::Set(text),
    };
    Ok((item, next))
}
