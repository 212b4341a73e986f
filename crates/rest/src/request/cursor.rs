//! A position in a query-string value being parsed, with PostgREST-style error details
//! ("unexpected "x" expecting ...").

use crate::error::ApiError;

/// Characters that end an unquoted name in select, order and filter keys.
const NAME_END: &[char] = &[',', '(', ')', ':', '.', '!', '-', '>'];

/// Characters that end an unquoted JSON key (`!` may be part of one, as in PostgREST).
const KEY_END: &[char] = &[',', '(', ')', ':', '.', '-', '>'];

#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    pub text: &'a str,
    pub pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(text: &'a str) -> Cursor<'a> {
        Cursor { text, pos: 0 }
    }

    pub fn rest(&self) -> &'a str {
        self.text.get(self.pos..).unwrap_or_default()
    }

    pub fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.text.len()
    }

    pub fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    pub fn eat_str(&mut self, s: &str) -> bool {
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    /// The error for a parameter: `message` as PostgREST words it, and where the text stopped
    /// making sense.
    pub fn error(&self, message: String, expecting: &str) -> ApiError {
        let found = match self.peek() {
            Some(c) => format!("unexpected \"{c}\""),
            None => "unexpected end of input".to_string(),
        };
        ApiError::parse(
            message,
            format!(
                "{found} expecting {expecting} (at character {} of \"{}\")",
                self.pos + 1,
                self.text
            ),
        )
    }

    /// A name: a double-quoted identifier (`""` for a quote, `\` escaping) or a run of
    /// characters up to one that has a meaning here (and whitespace trimmed around it).
    pub fn name(&mut self) -> Option<String> {
        self.name_until(NAME_END)
    }

    /// A JSON key after an arrow: a name that may also hold `!`.
    pub fn json_key(&mut self) -> Option<String> {
        self.name_until(KEY_END)
    }

    fn name_until(&mut self, ends: &[char]) -> Option<String> {
        while self.eat(' ') {}
        if self.eat('"') {
            let mut out = String::new();
            let mut chars = self.rest().char_indices();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, next)) = chars.next() {
                            out.push(next);
                        }
                    }
                    '"' => {
                        self.pos += i + 1;
                        return Some(out);
                    }
                    c => out.push(c),
                }
            }
            return None;
        }
        let rest = self.rest();
        let mut end = rest.len();
        for (i, c) in rest.char_indices() {
            // `-` ends a name only where it starts an arrow.
            if c == '-' && !rest.get(i + 1..).is_some_and(|r| r.starts_with('>')) {
                continue;
            }
            if ends.contains(&c) {
                end = i;
                break;
            }
        }
        let name = rest.get(..end).unwrap_or_default().trim();
        if name.is_empty() {
            return None;
        }
        self.pos += end;
        Some(name.to_string())
    }
}
