//! Glob-style pattern matching with Redis's rules (`*`, `?`, `[a-z]`, `[^x]`, `\` escapes).

/// Whether `text` matches the glob `pattern`; `nocase` folds ASCII case (CONFIG GET).
pub fn matches(pattern: &[u8], text: &[u8], nocase: bool) -> bool {
    let (mut p, mut t) = (0usize, 0usize);
    // Where to resume after the last '*': pattern index after it, text index it matched up to.
    let mut star: Option<(usize, usize)> = None;
    loop {
        if p < pattern.len() && pattern[p] == b'*' {
            while p < pattern.len() && pattern[p] == b'*' {
                p += 1;
            }
            if p == pattern.len() {
                return true;
            }
            star = Some((p, t));
            continue;
        }
        if t == text.len() {
            return p == pattern.len();
        }
        if p < pattern.len()
            && let Some(width) = token_matches(pattern, p, text[t], nocase)
        {
            p += width;
            t += 1;
            continue;
        }
        match star {
            Some((sp, st)) if st < text.len() => {
                star = Some((sp, st + 1));
                p = sp;
                t = st + 1;
            }
            _ => return false,
        }
    }
}

/// If the single-character token at `pattern[p..]` matches `c`, the token's width.
fn token_matches(pattern: &[u8], p: usize, c: u8, nocase: bool) -> Option<usize> {
    let eq = |a: u8, b: u8| {
        if nocase {
            a.eq_ignore_ascii_case(&b)
        } else {
            a == b
        }
    };
    match pattern[p] {
        b'?' => Some(1),
        b'\\' if p + 1 < pattern.len() => eq(pattern[p + 1], c).then_some(2),
        b'[' => {
            let mut i = p + 1;
            let negate = pattern.get(i) == Some(&b'^');
            if negate {
                i += 1;
            }
            let mut found = false;
            loop {
                match pattern.get(i) {
                    // An unterminated class ends with the pattern, as in Redis.
                    None => {
                        i -= 1;
                        break;
                    }
                    Some(b']') => break,
                    Some(b'\\') if i + 1 < pattern.len() => {
                        i += 1;
                        if eq(pattern[i], c) {
                            found = true;
                        }
                    }
                    Some(&lo) if pattern.get(i + 1) == Some(&b'-') && i + 2 < pattern.len() => {
                        let hi = pattern[i + 2];
                        let (lo, hi) = if lo > hi { (hi, lo) } else { (lo, hi) };
                        let in_range = |x: u8| x >= lo && x <= hi;
                        if in_range(c)
                            || (nocase
                                && (in_range(c.to_ascii_lowercase())
                                    || in_range(c.to_ascii_uppercase())))
                        {
                            found = true;
                        }
                        i += 2;
                    }
                    Some(&x) => {
                        if eq(x, c) {
                            found = true;
                        }
                    }
                }
                i += 1;
            }
            (found != negate).then_some(i + 1 - p)
        }
        x => eq(x, c).then_some(1),
    }
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn redis_glob_cases() {
        assert!(matches(b"*", b"", false));
        assert!(matches(b"h?llo", b"hello", false));
        assert!(matches(b"h*llo", b"heeeello", false));
        assert!(matches(b"h[ae]llo", b"hallo", false));
        assert!(!matches(b"h[^e]llo", b"hello", false));
        assert!(matches(b"h[a-b]llo", b"hbllo", false));
        assert!(matches(b"h\\*llo", b"h*llo", false));
        assert!(!matches(b"h\\*llo", b"hello", false));
        assert!(matches(b"*max*memory*", b"maxmemory-policy", false));
        assert!(matches(b"MAXMEMORY", b"maxmemory", true));
        assert!(!matches(b"a*b", b"acbx", false));
        assert!(matches(b"a*b*c", b"aXbYbZc", false));
        assert!(!matches(b"key:?", b"key:", false));
    }
}
