//! Sorted set: members by score in a B-tree, scores by member in a hash map.

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::ops::Bound;

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
    pub value: f64,
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
    NegInf,
    PosInf,
    Inclusive(&'a [u8]),
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
    order: BTreeSet<(Score, Key)>,
}

impl ZSet {
    pub fn len(&self) -> usize {
        self.scores.len()
    }

    pub fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }

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

    pub fn remove(&mut self, member: &[u8]) -> Option<f64> {
        let score = self.scores.swap_remove(member)?;
        self.order.remove(&(Score(score), member.into()));
        Some(score)
    }

    /// Zero-based rank of a member in ascending (or descending when `rev`) order.
    pub fn rank(&self, member: &[u8], rev: bool) -> Option<usize> {
        let score = self.score(member)?;
        let below = self
            .order
            .range(..(Score(score), Key::from(member)))
            .count();
        Some(if rev { self.len() - 1 - below } else { below })
    }

    /// Members with ranks `start..=stop` (already clamped), ascending or descending.
    pub fn range_by_rank(&self, start: usize, stop: usize, rev: bool) -> Vec<(&[u8], f64)> {
        let take = stop.saturating_sub(start) + 1;
        if rev {
            self.order
                .iter()
                .rev()
                .skip(start)
                .take(take)
                .map(entry_pair)
                .collect()
        } else {
            self.order
                .iter()
                .skip(start)
                .take(take)
                .map(entry_pair)
                .collect()
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
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        let in_range = |e: &&(Score, Key)| min.above_min(e.0.0) && max.below_max(e.0.0);
        let lower = Bound::Included((Score(min.value), Key::default()));
        if rev {
            self.order
                .iter()
                .rev()
                .skip_while(|e| !max.below_max(e.0.0))
                .take_while(|e| min.above_min(e.0.0))
                .filter(in_range)
                .skip(offset)
                .take(limit)
                .map(entry_pair)
                .collect()
        } else {
            self.order
                .range((lower, Bound::Unbounded))
                .skip_while(|e| !min.above_min(e.0.0))
                .take_while(|e| max.below_max(e.0.0))
                .skip(offset)
                .take(limit)
                .map(entry_pair)
                .collect()
        }
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
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        let keep = |e: &&(Score, Key)| min.above_min(&e.1) && max.below_max(&e.1);
        if rev {
            self.order
                .iter()
                .rev()
                .filter(keep)
                .skip(offset)
                .take(limit)
                .map(entry_pair)
                .collect()
        } else {
            self.order
                .iter()
                .filter(keep)
                .skip(offset)
                .take(limit)
                .map(entry_pair)
                .collect()
        }
    }

    /// Number of members with a score in `min..max`.
    pub fn count_by_score(&self, min: ScoreBound, max: ScoreBound) -> usize {
        self.range_by_score(min, max, false, 0, -1).len()
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
}
