//! Splitting a body that arrives in frames into numbered lines (sans-I/O): a line inside one
//! frame is handed out as a slice of it; only a line cut by a frame boundary is copied, so what
//! is held is one frame and at most one partial line.

use bytes::Bytes;

/// Lines of a body fed frame by frame: `push` a frame, take its lines with `next_line` until
/// `None`, push the next; `finish` after the last frame hands out a last line without `\n`.
#[derive(Debug, Default)]
pub struct LineSplitter {
    /// The frame being split.
    frame: Bytes,
    /// Where the unsplit rest of `frame` starts.
    pos: usize,
    /// The start of a line cut by a frame boundary (or, when `carry_out`, that whole line).
    carry: Vec<u8>,
    /// `carry` was handed out as a line: empty it before going on.
    carry_out: bool,
    /// The number of the next line (1-based).
    line: u64,
    /// No frame follows.
    eof: bool,
}

impl LineSplitter {
    pub fn new() -> LineSplitter {
        LineSplitter {
            line: 1,
            ..LineSplitter::default()
        }
    }

    /// Feeds the next frame; call it once `next_line` answered `None` for the previous one (whose
    /// cut last line is then held as the start of the next line).
    pub fn push(&mut self, frame: Bytes) {
        self.take_carry_out();
        let rest = self.frame.get(self.pos..).unwrap_or_default();
        if !rest.is_empty() {
            self.carry.extend_from_slice(rest);
        }
        self.frame = frame;
        self.pos = 0;
    }

    /// Marks the end of the body: a last line without `\n` is handed out too.
    pub fn finish(&mut self) {
        self.eof = true;
    }

    /// Whether `finish` was called.
    pub fn finished(&self) -> bool {
        self.eof
    }

    /// The number of the line `next_line` gives next (after the end: one past the last line).
    pub fn line_number(&self) -> u64 {
        self.line
    }

    /// The bytes held besides the current frame: the start of a line cut by a frame boundary.
    #[cfg(test)]
    pub fn held(&self) -> usize {
        self.carry.len()
    }

    /// The next complete line (without its `\n`) and its number; `None`
    /// when the frame is used up (or, after `finish`, at the end).
    pub fn next_line(&mut self) -> Option<(&[u8], u64)> {
        self.take_carry_out();
        let start = self.pos;
        let rest = self.frame.get(start..).unwrap_or_default();
        let number = self.line;
        match memchr::memchr(b'\n', rest) {
            Some(end) => {
                self.pos = start + end + 1;
                self.line += 1;
                let line = if self.carry.is_empty() {
                    self.frame.get(start..start + end).unwrap_or_default()
                } else {
                    self.carry
                        .extend_from_slice(rest.get(..end).unwrap_or_default());
                    self.carry_out = true;
                    &self.carry
                };
                Some((line, number))
            }
            None => {
                if self.eof && self.carry.is_empty() && !rest.is_empty() {
                    // The last line, whole in the last frame: no copy.
                    self.pos = self.frame.len();
                    self.line += 1;
                    return Some((rest, number));
                }
                if !rest.is_empty() {
                    self.carry.extend_from_slice(rest);
                    self.pos = self.frame.len();
                }
                if !self.eof || self.carry.is_empty() {
                    return None;
                }
                self.line += 1;
                self.carry_out = true;
                Some((&self.carry, number))
            }
        }
    }

    fn take_carry_out(&mut self) {
        if self.carry_out {
            self.carry.clear();
            self.carry_out = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The lines of `body` fed in the given frames, and the most bytes held at any time.
    fn split(frames: &[&[u8]]) -> (Vec<(Vec<u8>, u64)>, usize) {
        let mut splitter = LineSplitter::new();
        let mut lines = Vec::new();
        let mut most = 0;
        for frame in frames {
            splitter.push(Bytes::copy_from_slice(frame));
            while let Some((line, n)) = splitter.next_line() {
                lines.push((line.to_vec(), n));
            }
            most = most.max(splitter.held());
        }
        splitter.finish();
        while let Some((line, n)) = splitter.next_line() {
            lines.push((line.to_vec(), n));
        }
        (lines, most)
    }

    fn whole(body: &[u8]) -> Vec<(Vec<u8>, u64)> {
        split(&[body]).0
    }

    #[test]
    fn lines_across_frames() {
        let (lines, _) = split(&[b"ab", b"c\r", b"\nd\n\ne", b"f"]);
        let expected: Vec<(Vec<u8>, u64)> = vec![
            (b"abc\r".to_vec(), 1),
            (b"d".to_vec(), 2),
            (b"".to_vec(), 3),
            (b"ef".to_vec(), 4),
        ];
        assert_eq!(lines, expected);
        assert_eq!(whole(b"a\n"), vec![(b"a".to_vec(), 1)]);
        assert!(whole(b"").is_empty());
    }

    #[test]
    fn a_line_inside_one_frame_is_not_copied() {
        let mut splitter = LineSplitter::new();
        splitter.push(Bytes::from_static(b"abc\ndef\nxy"));
        assert_eq!(splitter.next_line(), Some((&b"abc"[..], 1)));
        assert_eq!(splitter.held(), 0);
        assert_eq!(splitter.next_line(), Some((&b"def"[..], 2)));
        assert_eq!(splitter.next_line(), None);
        // Only the cut line's start is held.
        assert_eq!(splitter.held(), 2);
        splitter.push(Bytes::from_static(b"z\n"));
        assert_eq!(splitter.next_line(), Some((&b"xyz"[..], 3)));
        assert_eq!(splitter.next_line(), None);
        assert_eq!(splitter.held(), 0);
        splitter.finish();
        assert_eq!(splitter.next_line(), None);
        assert_eq!(splitter.line_number(), 4);
    }

    proptest! {
        /// Any frame boundaries give the lines of the whole body, and what is held besides the
        /// frame never exceeds the longest line (with its `\n`).
        #[test]
        fn frames_do_not_change_the_lines(
            body in proptest::collection::vec(
                prop_oneof![Just(b'\n'), Just(b'\r'), Just(b'a'), Just(b'"'), any::<u8>()],
                0..400,
            ),
            cuts in proptest::collection::vec(0usize..400, 0..20),
        ) {
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(body.len())).collect();
            cuts.sort_unstable();
            let mut frames = Vec::new();
            let mut start = 0;
            for cut in cuts {
                frames.push(&body[start..cut]);
                start = cut;
            }
            frames.push(&body[start..]);
            let (lines, most) = split(&frames);
            prop_assert_eq!(&lines, &whole(&body));
            let longest = body.split(|&b| b == b'\n').map(|l| l.len() + 1).max().unwrap_or(0);
            prop_assert!(most <= longest, "held {} > longest line {}", most, longest);
        }
    }
}
