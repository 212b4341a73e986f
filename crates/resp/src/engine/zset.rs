//! Sorted set: members by score in a B-tree, scores by member in a hash map.

use std::cmp::Ordering;

use super::ordered::Ordered;
use super::{Key, Map};

/// A score with a total order; NaN never gets in (commands reject it), and -0 equals 0.
#[derive(Debug, Clone, Copy)]
pub struct Score(pub f64);

impl PartialEq for Score {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Score {}
impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Score {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.partial_cmp(&other.0).unwrap_or(Ordering::Equal)
    }
}

/// A score bound of ZRANGEBYSCORE and friends: `(1.5` is exclusive.
#[derive(Debug, Clone, Copy)]
pub struct ScoreBound {
    /// The bound's score.
    pub value: f64,
    /// True for `(`: the score itself is outside the range.
    pub exclusive: bool,
}

impl ScoreBound {
    fn above_min(&self, score: f64) -> bool {
        if self.exclusive {
            score > self.value
        } else {
            score >= self.value
        }
    }
    fn below_max(&self, score: f64) -> bool {
        if self.exclusive {
            score < self.value
        } else {
            score <= self.value
        }
    }
}

/// A lexicographic bound of ZRANGEBYLEX: `-`, `+`, `[a` or `(a`.
#[derive(Debug, Clone)]
pub enum LexBound<'a> {
    /// `-`: below every member.
    NegInf,
    /// `+`: above every member.
    PosInf,
    /// `[a`: the range includes `a`.
    Inclusive(&'a [u8]),
    /// `(a`: the range stops short of `a`.
    Exclusive(&'a [u8]),
}

impl LexBound<'_> {
    fn above_min(&self, m: &[u8]) -> bool {
        match self {
            LexBound::NegInf => true,
            LexBound::PosInf => false,
            LexBound::Inclusive(v) => m >= *v,
            LexBound::Exclusive(v) => m > *v,
        }
    }
    fn below_max(&self, m: &[u8]) -> bool {
        match self {
            LexBound::NegInf => false,
            LexBound::PosInf => true,
            LexBound::Inclusive(v) => m <= *v,
            LexBound::Exclusive(v) => m < *v,
        }
    }
}

/// A sorted set.
#[derive(Debug, Clone, Default)]
pub struct ZSet {
    scores: Map<Key, f64>,
    order: Ordered<(Score, Key)>,
}

impl ZSet {
    /// Number of members.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// True when it has no members.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The member's score, or None when it is not a member.
    pub fn score(&self, member: &[u8]) -> Option<f64> {
        self.scores.get(member).copied()
    }

    /// Sets a member's score; returns the previous score.
    pub fn insert(&mut self, member: &[u8], score: f64) -> Option<f64> {
        let score = if score == 0.0 { 0.0 } else { score };
        match self.scores.get_mut(member) {
            Some(old) => {
                let previous = *old;
                if Score(previous) != Score(score) || previous.to_bits() != score.to_bits() {
                    *old = score;
                    let key: Key = member.into();
                    self.order.remove(&(Score(previous), key.clone()));
                    self.order.insert((Score(score), key));
                }
                Some(previous)
            }
            None => {
                let key: Key = member.into();
                self.scores.insert(key.clone(), score);
                self.order.insert((Score(score), key));
                None
            }
        }
    }

    /// Removes a member; returns its score, or None when it was not one.
    pub fn remove(&mut self, member: &[u8]) -> Option<f64> {
        let score = self.scores.swap_remove(member)?;
        self.order.remove(&(Score(score), member.into()));
        Some(score)
    }

    /// Zero-based rank of a member in ascending (or descending when `rev`) order.
    pub fn rank(&self, member: &[u8], rev: bool) -> Option<usize> {
        let score = self.score(member)?;
        let below = self.order.rank(&(Score(score), Key::from(member)));
        Some(if rev { self.len() - 1 - below } else { below })
    }

    /// Members with ranks `start..=stop` (already clamped), ascending or descending.
    pub fn range_by_rank(&self, start: usize, stop: usize, rev: bool) -> Vec<(&[u8], f64)> {
        if start > stop || stop >= self.len() {
            return Vec::new();
        }
        if rev {
            let (a, b) = (self.len() - 1 - stop, self.len() - start);
            self.order.slice(a, b).rev().map(entry_pair).collect()
        } else {
            self.order.slice(start, stop + 1).map(entry_pair).collect()
        }
    }

    /// Positions `a..b` of the members whose score is within `min..max`.
    fn score_span(&self, min: ScoreBound, max: ScoreBound) -> (usize, usize) {
        let a = self.order.count_while(|e| !min.above_min(e.0.0));
        let b = self
            .order
            .count_while(|e| max.below_max(e.0.0) || !min.above_min(e.0.0));
        (a, b.max(a))
    }

    /// Positions `a..b` as (member, score), ascending (or descending when `rev`), after skipping
    /// `offset` and taking at most `limit` (negative: all).
    fn window(
        &self,
        a: usize,
        b: usize,
        rev: bool,
        offset: usize,
        limit: i64,
    ) -> Vec<(&[u8], f64)> {
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        let span = self.order.slice(a, b);
        if rev {
            span.rev()
                .skip(offset)
                .take(limit)
                .map(entry_pair)
                .collect()
        } else {
            span.skip(offset).take(limit).map(entry_pair).collect()
        }
    }

    /// Members whose score is within `min..max`, ascending (or descending when `rev`), after
    /// skipping `offset` and taking at most `limit` (negative: all).
    pub fn range_by_score(
        &self,
        min: ScoreBound,
        max: ScoreBound,
        rev: bool,
        offset: usize,
        limit: i64,
    ) -> Vec<(&[u8], f64)> {
        let (a, b) = self.score_span(min, max);
        self.window(a, b, rev, offset, limit)
    }

    /// Members between two lexicographic bounds (all scores assumed equal, as Redis requires).
    pub fn range_by_lex(
        &self,
        min: &LexBound<'_>,
        max: &LexBound<'_>,
        rev: bool,
        offset: usize,
        limit: i64,
    ) -> Vec<(&[u8], f64)> {
        let a = self.order.count_while(|e| !min.above_min(&e.1));
        let b = self
            .order
            .count_while(|e| max.below_max(&e.1) || !min.above_min(&e.1))
            .max(a);
        self.window(a, b, rev, offset, limit)
    }

    /// Number of members with a score in `min..max`.
    pub fn count_by_score(&self, min: ScoreBound, max: ScoreBound) -> usize {
        let (a, b) = self.score_span(min, max);
        b - a
    }

    /// Removes and returns the lowest (or highest) scored member.
    pub fn pop(&mut self, max: bool) -> Option<(Key, f64)> {
        let (score, key) = if max {
            self.order.pop_last()?
        } else {
            self.order.pop_first()?
        };
        self.scores.swap_remove(&key);
        Some((key, score.0))
    }

    /// The member at an index of the hash map, for SCAN and random picks.
    pub fn get_index(&self, i: usize) -> Option<(&[u8], f64)> {
        self.scores.get_index(i).map(|(k, s)| (&k[..], *s))
    }

    /// All members in ascending order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&[u8], f64)> {
        self.order.iter().map(|(s, k)| (&k[..], s.0))
    }
}

fn entry_pair((s, k): &(Score, Key)) -> (&[u8], f64) {
    (&k[..], s.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_rank_and_ranges() {
        let mut z = ZSet::default();
        z.insert(b"b", 2.0);
        z.insert(b"a", 1.0);
        z.insert(b"c", 3.0);
        assert_eq!(z.insert(b"a", 4.0), Some(1.0));
        assert_eq!(z.rank(b"a", false), Some(2));
        assert_eq!(z.rank(b"a", true), Some(0));
        let min = ScoreBound {
            value: 2.0,
            exclusive: true,
        };
        let max = ScoreBound {
            value: f64::INFINITY,
            exclusive: false,
        };
        let got: Vec<_> = z
            .range_by_score(min, max, false, 0, -1)
            .into_iter()
            .map(|(m, _)| m.to_vec())
            .collect();
        assert_eq!(got, vec![b"c".to_vec(), b"a".to_vec()]);
        assert_eq!(z.pop(false), Some((Key::from(&b"b"[..]), 2.0)));
        assert_eq!(z.remove(b"c"), Some(3.0));
        assert_eq!(z.len(), 1);
    }

    proptest::proptest! {
        #[test]
        fn ranges_match_a_naive_model(
            entries in proptest::collection::vec((0u8..40, -20i8..20), 0..200),
            lo in -25i8..25, hi in -25i8..25, lo_ex: bool, hi_ex: bool, rev: bool,
            offset in 0usize..10, limit in -1i64..20,
        ) {
            let mut z = ZSet::default();
            let mut model = std::collections::BTreeMap::new();
            for (m, s) in entries {
                let member = format!("m{m:02}").into_bytes();
                z.insert(&member, f64::from(s));
                model.insert(member, f64::from(s));
            }
            let mut sorted: Vec<(Vec<u8>, f64)> = model.into_iter().collect();
            sorted.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
            let min = ScoreBound { value: f64::from(lo), exclusive: lo_ex };
            let max = ScoreBound { value: f64::from(hi), exclusive: hi_ex };
            let mut want: Vec<(Vec<u8>, f64)> =
                sorted.iter().filter(|(_, s)| min.above_min(*s) && max.below_max(*s)).cloned().collect();
            proptest::prop_assert_eq!(z.count_by_score(min, max), want.len());
            if rev {
                want.reverse();
            }
            let take = usize::try_from(limit).unwrap_or(usize::MAX);
            let want: Vec<_> = want.into_iter().skip(offset).take(take).collect();
            let got: Vec<_> = z.range_by_score(min, max, rev, offset, limit).into_iter().map(|(m, s)| (m.to_vec(), s)).collect();
            proptest::prop_assert_eq!(got, want);
            for (i, (m, _)) in sorted.iter().enumerate() {
                proptest::prop_assert_eq!(z.rank(m, false), Some(i));
                proptest::prop_assert_eq!(z.rank(m, true), Some(sorted.len() - 1 - i));
            }
            if !sorted.is_empty() {
                let (a, b) = (offset.min(sorted.len() - 1), (offset + 5).min(sorted.len() - 1));
                let got: Vec<_> = z.range_by_rank(a, b, rev).into_iter().map(|(m, _)| m.to_vec()).collect();
                let mut names: Vec<_> = sorted.iter().map(|(m, _)| m.clone()).collect();
                if rev {
                    names.reverse();
                }
                proptest::prop_assert_eq!(got, names[a..=b].to_vec());
            }
        }
    }
}
