//! The pipelining mode: independent short statements from many tasks share connections' round
//! trips. Each statement is queued with its parameters (owned, since another task sends it); a few
//! dispatcher tasks each take what has queued up, send it as one pipeline on a pooled connection,
//! and hand each result back to its caller.

use super::Pool;
use crate::error::{Error, ErrorKind, Result};
use crate::pipeline::SyncMode;
use crate::rows::Rows;
use crate::types::ToSql;
use parking_lot::Mutex;
use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::{Notify, oneshot};

/// The most statements sent in one round trip.
const MAX_BATCH: usize = 64;

/// A parameter owned by a queued statement.
pub type OwnedParam = Box<dyn ToSql + Send>;

/// A statement and its parameters, owned by the queue until a dispatcher sends them.
struct Owned {
    sql: Cow<'static, str>,
    params: Params,
}

impl Owned {
    fn new(sql: impl Into<Cow<'static, str>>, params: Params) -> Owned {
        Owned {
            sql: sql.into(),
            params,
        }
    }
}

/// A statement's parameters: values of any type, or text (`None`: NULL) as SQL renderers make
/// them, kept as they are instead of boxing each one.
enum Params {
    Boxed(Vec<OwnedParam>),
    Text(Vec<Option<String>>),
}

struct Request {
    /// Runs before everything, in the same implicit transaction: [`crate::lsn::REPLAYED_SQL`],
    /// whose `f` turns the answer into an [`ErrorKind::NotReplayed`] error.
    guard: Option<Owned>,
    /// Runs first, in the same implicit transaction; its rows are not wanted.
    context: Option<Owned>,
    main: Owned,
    reply: oneshot::Sender<Result<Rows>>,
}

struct Queue {
    requests: Mutex<VecDeque<Request>>,
    work: Notify,
    stopped: AtomicBool,
    dispatchers: usize,
}

impl Queue {
    /// Takes this dispatcher's share of what has queued up: an even share among the
    /// dispatchers, so a burst spreads over connections, at most [`MAX_BATCH`].
    fn take_batch(&self) -> (Vec<Request>, bool) {
        let mut requests = self.requests.lock();
        let share = requests
            .len()
            .div_ceil(self.dispatchers)
            .clamp(1, MAX_BATCH)
            .min(requests.len());
        let batch: Vec<Request> = requests.drain(..share).collect();
        (batch, !requests.is_empty())
    }
}

/// Stops the dispatchers when the last [`Multiplexer`] handle goes.
struct Handle {
    queue: Arc<Queue>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.queue.stopped.store(true, Ordering::Release);
        self.queue.work.notify_waiters();
    }
}

/// Pipelining mode over a [`Pool`]: statements from any number of tasks are queued and sent in
/// batches, each batch as one pipeline (one write, one round trip) on one pooled connection.
/// Each statement (with its context statement, if any) runs in its own implicit transaction (a
/// Sync after each), so one failing does not affect the others.
///
/// For short independent statements only: no transactions, no session state, no COPY. A query
/// whose caller stops waiting still runs. Parameters are owned (boxed) because another task sends
/// them. Cheap to clone; the dispatchers stop when the last clone is dropped.
#[derive(Clone)]
pub struct Multiplexer {
    handle: Arc<Handle>,
}

impl Multiplexer {
    pub(crate) fn start(pool: Pool, connections: usize) -> Result<Multiplexer> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            Error::new(
                ErrorKind::Usage,
                "the pipelining mode runs tasks: start it inside a Tokio runtime",
            )
        })?;
        let dispatchers = connections.clamp(1, pool.settings().max_size());
        let queue = Arc::new(Queue {
            requests: Mutex::new(VecDeque::new()),
            work: Notify::new(),
            stopped: AtomicBool::new(false),
            dispatchers,
        });
        for _ in 0..dispatchers {
            runtime.spawn(dispatch(pool.clone(), queue.clone()));
        }
        Ok(Multiplexer {
            handle: Arc::new(Handle { queue }),
        })
    }

    /// Runs `sql` with `params` in the next batch and returns its rows (text format).
    ///
    /// ```no_run
    /// # async fn demo(mux: &sluice_pg::pool::Multiplexer) -> sluice_pg::Result<()> {
    /// let rows = mux
    ///     .query("SELECT abalance FROM pgbench_accounts WHERE aid = $1", vec![Box::new(42)])
    ///     .await?;
    /// # let _ = rows; Ok(()) }
    /// ```
    pub async fn query(
        &self,
        sql: impl Into<Cow<'static, str>>,
        params: Vec<OwnedParam>,
    ) -> Result<Rows> {
        self.enqueue(None, None, Owned::new(sql, Params::Boxed(params)))
            .await
    }

    /// [`Multiplexer::query`] with text parameters (`None`: NULL).
    pub async fn query_text(
        &self,
        sql: impl Into<Cow<'static, str>>,
        params: Vec<Option<String>>,
    ) -> Result<Rows> {
        self.enqueue(None, None, Owned::new(sql, Params::Text(params)))
            .await
    }

    /// Runs `sql` (behind `context`, a statement and its parameters, as
    /// [`Multiplexer::query_in_context`] does) only on a server that has replayed the WAL up to
    /// `lsn`: a replica's read for a client that must see its own writes. The guard
    /// [`crate::lsn::REPLAYED_SQL`] runs first in the same implicit transaction, so `sql`'s
    /// snapshot is taken after it; when it finds the server has not replayed that far, the rows
    /// are dropped and the answer is an error of kind [`ErrorKind::NotReplayed`] (read from the
    /// primary then).
    pub async fn query_replayed(
        &self,
        lsn: crate::Lsn,
        context: Option<(Cow<'static, str>, Vec<Option<String>>)>,
        sql: impl Into<Cow<'static, str>>,
        params: Vec<Option<String>>,
    ) -> Result<Rows> {
        let guard = Owned::new(
            crate::lsn::REPLAYED_SQL,
            Params::Text(vec![Some(lsn.to_string())]),
        );
        let context = context.map(|(sql, params)| Owned::new(sql, Params::Text(params)));
        self.enqueue(Some(guard), context, Owned::new(sql, Params::Text(params)))
            .await
    }

    /// Runs `context_sql` and then `sql` in one implicit transaction of the next batch and
    /// returns the rows of `sql`: the context statement's transaction-local settings
    /// (`set_config(..., true)`, a role) hold for `sql` and end with it, so requests running as
    /// different roles share a connection's round trip. When the context statement fails, its
    /// error is returned and `sql` does not run.
    pub async fn query_in_context(
        &self,
        context_sql: impl Into<Cow<'static, str>>,
        context_params: Vec<OwnedParam>,
        sql: impl Into<Cow<'static, str>>,
        params: Vec<OwnedParam>,
    ) -> Result<Rows> {
        let context = Owned::new(context_sql, Params::Boxed(context_params));
        self.enqueue(None, Some(context), Owned::new(sql, Params::Boxed(params)))
            .await
    }

    /// [`Multiplexer::query_in_context`] with text parameters (`None`: NULL).
    pub async fn query_in_context_text(
        &self,
        context_sql: impl Into<Cow<'static, str>>,
        context_params: Vec<Option<String>>,
        sql: impl Into<Cow<'static, str>>,
        params: Vec<Option<String>>,
    ) -> Result<Rows> {
        let context = Owned::new(context_sql, Params::Text(context_params));
        self.enqueue(None, Some(context), Owned::new(sql, Params::Text(params)))
            .await
    }

    async fn enqueue(
        &self,
        guard: Option<Owned>,
        context: Option<Owned>,
        main: Owned,
    ) -> Result<Rows> {
        let (reply, answer) = oneshot::channel();
        let queue = &self.handle.queue;
        queue.requests.lock().push_back(Request {
            guard,
            context,
            main,
            reply,
        });
        queue.work.notify_one();
        answer.await.map_err(|_| {
            Error::new(
                ErrorKind::Closed,
                "the pipelining mode stopped before the statement ran",
            )
        })?
    }
}

impl std::fmt::Debug for Multiplexer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let queue = &self.handle.queue;
        f.debug_struct("Multiplexer")
            .field("dispatchers", &queue.dispatchers)
            .field("queued", &queue.requests.lock().len())
            .finish()
    }
}

/// One dispatcher: waits for statements, takes a connection, and sends batches on it while more
/// keep coming.
async fn dispatch(pool: Pool, queue: Arc<Queue>) {
    loop {
        loop {
            let notified = queue.work.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            if !queue.requests.lock().is_empty() {
                break;
            }
            if queue.stopped.load(Ordering::Acquire) {
                return;
            }
            notified.await;
        }
        let mut conn = match pool.get().await {
            Ok(conn) => conn,
            Err(e) => {
                let (batch, _) = queue.take_batch();
                for request in batch {
                    let _ = request.reply.send(Err(e.clone().into()));
                }
                continue;
            }
        };
        loop {
            let (batch, more) = queue.take_batch();
            if batch.is_empty() {
                break;
            }
            if more {
                // Let a sleeping peer take the rest on another connection.
                queue.work.notify_one();
            }
            run_batch(&mut conn, batch).await;
            if conn.is_broken() {
                break;
            }
        }
    }
}

/// Sends a batch as one pipeline, each request its own group (one Sync), and answers each
/// caller.
async fn run_batch(conn: &mut crate::Connection, batch: Vec<Request>) {
    let mut pipeline = match conn.pipeline(SyncMode::Groups).await {
        Ok(p) => p,
        Err(e) => {
            let text = e.to_string();
            for request in batch {
                let _ = request.reply.send(Err(Error::new(e.kind(), text.clone())));
            }
            return;
        }
    };
    // Written first, by reference, with one parameter list reused for every statement (no
    // allocation per statement); then each request's place in the results, or the error that
    // kept it from being written.
    let mut placed: Vec<Result<Placed>> = Vec::with_capacity(batch.len());
    {
        let mut refs: Vec<&dyn ToSql> = Vec::with_capacity(8);
        for request in &batch {
            let guard_at = match &request.guard {
                Some(guard) => match add(&mut pipeline, &mut refs, guard) {
                    Ok(i) => Some(i),
                    Err(e) => {
                        pipeline.sync();
                        placed.push(Err(e));
                        continue;
                    }
                },
                None => None,
            };
            let context_at = match &request.context {
                Some(context) => match add(&mut pipeline, &mut refs, context) {
                    Ok(i) => Some(i),
                    Err(e) => {
                        if guard_at.is_some() {
                            pipeline.sync();
                        }
                        placed.push(Err(e));
                        continue;
                    }
                },
                None => None,
            };
            // Not written (a parameter did not encode): only this caller hears of it.
            let main = add(&mut pipeline, &mut refs, &request.main);
            // The group ends here even when the statement did not encode: a context alone in
            // its group only sets what its Sync undoes.
            pipeline.sync();
            placed.push(main.map(|main| Placed {
                guard: guard_at,
                context: context_at,
                main,
            }));
        }
    }
    let mut sent = Vec::with_capacity(batch.len());
    for (request, place) in batch.into_iter().zip(placed) {
        match place {
            Ok(place) => sent.push((place, request.reply)),
            Err(e) => drop(request.reply.send(Err(e))),
        }
    }
    if sent.is_empty() && pipeline.is_empty() {
        return;
    }
    match pipeline.run().await {
        Ok(results) => {
            let mut results: Vec<Option<Result<Rows>>> = results.into_iter().map(Some).collect();
            let mut take = |i: usize| results.get_mut(i).and_then(Option::take);
            // A guard or context that ran but was rolled back with its group because the main
            // statement failed says only that (PipelineAborted): the main's error is the answer.
            let own = |error: Error| (error.kind() != ErrorKind::PipelineAborted).then_some(error);
            for (place, reply) in sent {
                let guard_error = place
                    .guard
                    .and_then(&mut take)
                    .and_then(|guard| match guard {
                        Ok(rows) if crate::lsn::replayed(&rows) => None,
                        Ok(_) => Some(Error::new(
                            ErrorKind::NotReplayed,
                            "the server has not replayed the WAL up to the read's position",
                        )),
                        Err(error) => own(error),
                    });
                let context_error = place
                    .context
                    .and_then(&mut take)
                    .and_then(Result::err)
                    .and_then(own);
                let main = take(place.main);
                let result = match guard_error.or(context_error) {
                    Some(error) => Err(error),
                    None => main.unwrap_or_else(|| {
                        Err(Error::new(
                            ErrorKind::Closed,
                            "the pipelined batch ended without this statement's result",
                        ))
                    }),
                };
                let _ = reply.send(result);
            }
        }
        Err(e) => {
            let text = format!("the pipelined batch failed: {e}");
            for (_, reply) in sent {
                let _ = reply.send(Err(Error::new(ErrorKind::Closed, text.clone())));
            }
        }
    }
}

/// Where a request's statements are in the batch's results.
struct Placed {
    guard: Option<usize>,
    context: Option<usize>,
    main: usize,
}

/// Adds a queued statement to the pipeline through `refs` (cleared and refilled: reused for
/// every statement of a batch); its index in the results.
fn add<'a>(
    pipeline: &mut crate::Pipeline<'_>,
    refs: &mut Vec<&'a dyn ToSql>,
    statement: &'a Owned,
) -> Result<usize> {
    refs.clear();
    match &statement.params {
        Params::Boxed(params) => refs.extend(params.iter().map(|p| &**p as &dyn ToSql)),
        Params::Text(params) => refs.extend(params.iter().map(|p| p as &dyn ToSql)),
    }
    pipeline.query(statement.sql.as_ref(), refs)
}
