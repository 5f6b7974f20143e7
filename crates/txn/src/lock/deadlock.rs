//! Deadlock detection (PostgreSQL's `deadlock.c`, reduced), run by a
//! waiter once `deadlock_timeout` has passed, with every partition locked.
//!
//! The waits-for graph has a hard edge from a waiter to each holder of a
//! mode that conflicts with its request, and a soft edge to each earlier
//! waiter in the same queue whose request conflicts with it. Only cycles
//! through the checking process count. A cycle of hard edges is a
//! deadlock. A cycle with soft edges may be broken by letting a waiter go
//! ahead of the one it waits behind: the check tries such reorderings
//! (constraints "waiter before blocker", queues re-sorted to obey them),
//! and if one leaves no cycle it applies it and grants what became
//! grantable. Otherwise the checking process is the victim: it leaves its
//! queue and reports the cycle.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::mode::{LockMode, ModeMask};
use super::tag::LockTag;
use super::{DeadlockEdge, DeadlockReport, LockManager, Proc, WaitStatus};

/// Reorderings tried before giving up (depth of the search).
const MAX_CONSTRAINTS: usize = 8;

struct LockView {
    tag: LockTag,
    holders: Vec<(u32, ModeMask)>,
    queue: Vec<(u32, LockMode)>,
}

#[derive(Clone, Copy)]
struct Edge {
    from: u32,
    to: u32,
    lock: usize,
    soft: bool,
}

/// "`first` must be queued before `then` on lock `lock`".
#[derive(Clone, Copy)]
struct Constraint {
    lock: usize,
    first: u32,
    then: u32,
}

struct Graph {
    locks: Vec<LockView>,
    /// Each waiting proc: the lock (index into `locks`) and the mode.
    waiting: HashMap<u32, (usize, LockMode)>,
    pids: HashMap<u32, i32>,
}

impl Graph {
    /// The queues with the constraints applied, None if they contradict.
    fn queues(&self, constraints: &[Constraint]) -> Option<Vec<Vec<(u32, LockMode)>>> {
        let mut out: Vec<Vec<(u32, LockMode)>> =
            self.locks.iter().map(|l| l.queue.clone()).collect();
        for (i, q) in out.iter_mut().enumerate() {
            let mine: Vec<&Constraint> = constraints.iter().filter(|c| c.lock == i).collect();
            if mine.is_empty() {
                continue;
            }
            let mut rest = std::mem::take(q);
            while !rest.is_empty() {
                // The earliest waiter nobody still waiting must precede.
                let pos = rest.iter().position(|(p, _)| {
                    !mine
                        .iter()
                        .any(|c| c.then == *p && rest.iter().any(|(r, _)| *r == c.first))
                })?;
                q.push(rest.remove(pos));
            }
        }
        Some(out)
    }

    fn find_cycle(&self, start: u32, queues: &[Vec<(u32, LockMode)>]) -> Option<Vec<Edge>> {
        let mut path = Vec::new();
        let mut visited = HashSet::from([start]);
        self.visit(start, start, queues, &mut path, &mut visited)
            .then_some(path)
    }

    fn visit(
        &self,
        p: u32,
        start: u32,
        queues: &[Vec<(u32, LockMode)>],
        path: &mut Vec<Edge>,
        visited: &mut HashSet<u32>,
    ) -> bool {
        let Some(&(li, mode)) = self.waiting.get(&p) else {
            return false;
        };
        let hard = self.locks[li]
            .holders
            .iter()
            .filter(|(h, modes)| *h != p && mode.conflicts() & modes != 0)
            .map(|(h, _)| (*h, false));
        let queue = &queues[li];
        let pos = queue.iter().position(|(w, _)| *w == p).unwrap_or(0);
        let soft = queue[..pos]
            .iter()
            .filter(|(_, m)| mode.conflicts_with(*m))
            .map(|(w, _)| (*w, true));
        let edges: Vec<(u32, bool)> = hard.chain(soft).collect();
        for (to, soft) in edges {
            let edge = Edge {
                from: p,
                to,
                lock: li,
                soft,
            };
            if to == start {
                path.push(edge);
                return true;
            }
            if visited.insert(to) {
                path.push(edge);
                if self.visit(to, start, queues, path, visited) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }

    /// Queues under which no cycle runs through `start`, found by
    /// reordering past soft edges.
    fn resolve(
        &self,
        start: u32,
        constraints: &mut Vec<Constraint>,
    ) -> Option<Vec<Vec<(u32, LockMode)>>> {
        let queues = self.queues(constraints)?;
        let Some(cycle) = self.find_cycle(start, &queues) else {
            return Some(queues);
        };
        if constraints.len() >= MAX_CONSTRAINTS {
            return None;
        }
        for e in cycle.iter().filter(|e| e.soft) {
            constraints.push(Constraint {
                lock: e.lock,
                first: e.from,
                then: e.to,
            });
            if let Some(q) = self.resolve(start, constraints) {
                return Some(q);
            }
            constraints.pop();
        }
        None
    }

    fn report(&self, cycle: &[Edge]) -> DeadlockReport {
        DeadlockReport {
            edges: cycle
                .iter()
                .map(|e| DeadlockEdge {
                    pid: self.pids[&e.from],
                    mode: self.waiting[&e.from].1,
                    tag: self.locks[e.lock].tag,
                    blocker: self.pids.get(&e.to).copied().unwrap_or(0),
                })
                .collect(),
        }
    }
}

/// Checks for a deadlock involving `me`, which waits. Returns the cycle if
/// `me` must give up; `me` has then left its queue. Otherwise any queue
/// reordering that broke a soft cycle has been applied.
pub(crate) fn check(mgr: &LockManager, me: &Arc<Proc>) -> Option<DeadlockReport> {
    // Every partition, in order (the only place more than one is held).
    let mut parts: Vec<_> = mgr.partitions.iter().map(|p| p.write()).collect();
    let mut graph = Graph {
        locks: Vec::new(),
        waiting: HashMap::new(),
        pids: HashMap::new(),
    };
    for part in parts.iter() {
        for (tag, lock) in part.locks.iter().filter(|(_, l)| !l.waiters.is_empty()) {
            let li = graph.locks.len();
            for h in &lock.holders {
                graph.pids.insert(h.proc.number, h.proc.pid());
            }
            for w in &lock.waiters {
                graph.pids.insert(w.proc.number, w.proc.pid());
                graph.waiting.insert(w.proc.number, (li, w.mode));
            }
            graph.locks.push(LockView {
                tag: *tag,
                holders: lock
                    .holders
                    .iter()
                    .map(|h| (h.proc.number, h.modes))
                    .collect(),
                queue: lock
                    .waiters
                    .iter()
                    .map(|w| (w.proc.number, w.mode))
                    .collect(),
            });
        }
    }
    // Granted meanwhile: nothing to check.
    let &(my_lock, _) = graph.waiting.get(&me.number)?;
    let original = graph.queues(&[]).expect("no constraints");
    let cycle = graph.find_cycle(me.number, &original)?;
    let tag_of = |li: usize| graph.locks[li].tag;
    match graph.resolve(me.number, &mut Vec::new()) {
        Some(queues) => {
            for (li, q) in queues.iter().enumerate() {
                if *q == original[li] {
                    continue;
                }
                let tag = tag_of(li);
                let lock = parts[mgr.partition_index(&tag)]
                    .locks
                    .get_mut(&tag)
                    .expect("seen above");
                lock.waiters.sort_by_key(|w| {
                    q.iter()
                        .position(|(p, _)| *p == w.proc.number)
                        .unwrap_or(usize::MAX)
                });
                lock.wake_waiters();
            }
            None
        }
        None => {
            let tag = tag_of(my_lock);
            let part = &mut parts[mgr.partition_index(&tag)];
            let lock = part.locks.get_mut(&tag).expect("seen above");
            lock.dequeue(me);
            lock.wake_waiters();
            part.forget_if_unused(&tag);
            let mut w = me.wait.lock();
            w.status = WaitStatus::NotWaiting;
            w.on = None;
            Some(graph.report(&cycle))
        }
    }
}
