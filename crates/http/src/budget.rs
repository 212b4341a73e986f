//! The global budget on request-body memory in flight: bodies reserve their bytes before they are
//! held, wait briefly when it is spent, and are refused (503 with `Retry-After`) after that.
//!
//! One budget per server, shared by every gate that reads bodies through [`crate::body`]. A
//! reservation is in KiB units of a fair (FIFO) semaphore, so a large body waiting first is not
//! overtaken forever by small ones. A single reservation larger than the whole budget is cut
//! down to the whole budget: such a body runs alone rather than never.

use bytes::Bytes;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

const UNIT: usize = 1024;

/// A server's budget of request-body bytes in memory.
#[derive(Debug)]
pub struct MemoryBudget {
    permits: Arc<Semaphore>,
    /// The budget in units.
    total_units: u32,
    /// Longest wait for room before a body is refused.
    wait: Duration,
}

/// The budget is spent and did not free up within the wait (answer 503 with `Retry-After`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the server is at its budget of {budget} bytes of request bodies in memory and no room \
     freed up within {wait:?}; retry later"
)]
pub struct Busy {
    /// The budget, in bytes.
    pub budget: usize,
    /// How long the body waited.
    pub wait: Duration,
}

impl MemoryBudget {
    /// A budget of `bytes` (at least 1 KiB), waiting at most `wait` for room.
    pub fn new(bytes: usize, wait: Duration) -> Arc<MemoryBudget> {
        let total_units = u32::try_from(bytes.div_ceil(UNIT).max(1)).unwrap_or(u32::MAX);
        Arc::new(MemoryBudget {
            permits: Arc::new(Semaphore::new(total_units as usize)),
            total_units,
            wait,
        })
    }

    /// The budget in bytes.
    pub fn bytes(&self) -> usize {
        self.total_units as usize * UNIT
    }

    /// Bytes reserved now.
    pub fn in_use(&self) -> usize {
        (self.total_units as usize).saturating_sub(self.permits.available_permits()) * UNIT
    }

    /// Reserves `bytes`, waiting up to the budget's wait for room.
    pub async fn reserve(&self, bytes: usize) -> Result<Reservation, Busy> {
        let units = self.units(bytes);
        if units == 0 {
            return Ok(Reservation { permit: None });
        }
        let acquire = self.permits.clone().acquire_many_owned(units);
        match tokio::time::timeout(self.wait, acquire).await {
            Ok(Ok(permit)) => Ok(Reservation {
                permit: Some(permit),
            }),
            // The semaphore is never closed; a closed one means no budget at all.
            Ok(Err(_)) => Ok(Reservation { permit: None }),
            Err(_) => Err(Busy {
                budget: self.bytes(),
                wait: self.wait,
            }),
        }
    }

    /// Grows `reservation` to cover `bytes` (at most the whole budget), waiting as
    /// [`MemoryBudget::reserve`] does.
    pub async fn grow(&self, reservation: &mut Reservation, bytes: usize) -> Result<(), Busy> {
        let want = self.units(bytes) as usize;
        let have = reservation.permit.as_ref().map_or(0, |p| p.num_permits());
        if want > have {
            let more = self.reserve((want - have) * UNIT).await?;
            reservation.merge(more);
        }
        Ok(())
    }

    fn units(&self, bytes: usize) -> u32 {
        u32::try_from(bytes.div_ceil(UNIT))
            .unwrap_or(u32::MAX)
            .min(self.total_units)
    }
}

/// Bytes held against a [`MemoryBudget`]; given back when dropped.
#[derive(Debug, Default)]
pub struct Reservation {
    permit: Option<OwnedSemaphorePermit>,
}

impl Reservation {
    /// Adds `other` to this reservation (both are given back together).
    pub fn merge(&mut self, other: Reservation) {
        match (&mut self.permit, other.permit) {
            (Some(mine), Some(theirs)) => mine.merge(theirs),
            (None, theirs) => self.permit = theirs,
            (Some(_), None) => {}
        }
    }

    /// The bytes held (in whole KiB).
    pub fn bytes(&self) -> usize {
        self.permit.as_ref().map_or(0, |p| p.num_permits() * UNIT)
    }

    /// `data` that keeps this reservation until the last clone or slice of it is dropped.
    pub fn attach(self, data: impl AsRef<[u8]> + Send + 'static) -> Bytes {
        if self.permit.is_none() {
            return Bytes::from_owner(data);
        }
        Bytes::from_owner(Charged {
            data,
            _reservation: self,
        })
    }
}

/// Memory and the reservation that pays for it.
struct Charged<T> {
    data: T,
    _reservation: Reservation,
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Charged<T> {
    fn as_ref(&self) -> &[u8] {
        self.data.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn reservations_wait_then_fail_and_are_given_back_with_their_bytes() {
        let budget = MemoryBudget::new(10 * UNIT, Duration::from_millis(50));
        let first = budget.reserve(6 * UNIT).await.expect("room");
        assert_eq!(budget.in_use(), 6 * UNIT);
        let busy = budget.reserve(6 * UNIT).await.expect_err("no room");
        assert_eq!(busy.budget, 10 * UNIT);
        let body = first.attach(vec![7u8; 100]);
        let slice = body.slice(10..20);
        drop(body);
        assert_eq!(budget.in_use(), 6 * UNIT, "a slice keeps the reservation");
        drop(slice);
        assert_eq!(budget.in_use(), 0);
        let mut all = budget.reserve(3 * UNIT).await.expect("room");
        all.merge(budget.reserve(7 * UNIT).await.expect("room"));
        assert_eq!(all.bytes(), 10 * UNIT);
        budget
            .grow(&mut all, 1000 * UNIT)
            .await
            .expect("holds it all already");
        drop(all);
        assert_eq!(budget.in_use(), 0);
    }

    #[tokio::test]
    async fn a_body_larger_than_the_budget_runs_alone() {
        let budget = MemoryBudget::new(4 * UNIT, Duration::from_millis(50));
        let huge = budget.reserve(100 * UNIT).await.expect("cut to the budget");
        assert_eq!(huge.bytes(), 4 * UNIT);
        assert!(budget.reserve(1).await.is_err());
        drop(huge);
        let waiting = {
            let budget = budget.clone();
            tokio::spawn(async move { budget.reserve(1).await.map(|r| r.bytes()) })
        };
        assert_eq!(waiting.await.expect("task"), Ok(UNIT));
        assert_eq!(budget.reserve(0).await.expect("nothing").bytes(), 0);
        let mut growing = Reservation::default();
        budget.grow(&mut growing, 3 * UNIT).await.expect("room");
        budget.grow(&mut growing, 2 * UNIT).await.expect("already");
        budget
            .grow(&mut growing, 9 * UNIT)
            .await
            .expect("cut to the budget");
        assert_eq!(growing.bytes(), 4 * UNIT);
    }
}
