//! The rows a query's terms found and their BM25 scores so far, summed in quarry (bm25.rs).
//! An issue text adds millions of list entries to up to every row of a million-chunk
//! database; a hash map keyed by row id took ~100 ns an entry there (each a cache miss), while
//! the lists arrive sorted by id, so a table indexed by id is walked nearly in order. Row ids
//! come from one sequence for every table and repo, so the span of ids the lists hold (their
//! blocks' `lo` and `hi`) bounds such a table: it is used when the entries fill at least an
//! eighth of that span, a hash map otherwise (a few rows spread over a long history).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use foldhash::HashMap;

/// The lowest share of the span of ids that the entries must fill for a table.
const DENSE_FILL: i64 = 8;

/// A found row: its repo and its score so far.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Found {
    pub repo: i64,
    pub rank: f64,
}

/// Found rows by id.
pub(crate) enum Scores {
    /// Rows with ids from `base`: each slot's score and its repo's number in `repos` plus one
    /// (0: not found). Rows outside the span (a phrase's, found by no list) in `outside`.
    Table {
        base: i64,
        ranks: Vec<f64>,
        repos: Vec<u32>,
        repo_ids: Vec<i64>,
        outside: HashMap<i64, Found>,
    },
    Map(HashMap<i64, Found>),
}

impl Scores {
    /// Room for about `entries` entries with ids from `lo` to `hi`.
    pub(crate) fn new(lo: i64, hi: i64, entries: i64) -> Scores {
        let span = hi.saturating_sub(lo).saturating_add(1);
        if entries > 0 && span > 0 && span <= entries.saturating_mul(DENSE_FILL) {
            Scores::Table {
                base: lo,
                ranks: vec![0.0; span as usize],
                repos: vec![0; span as usize],
                repo_ids: Vec::new(),
                outside: HashMap::default(),
            }
        } else {
            Scores::Map(HashMap::default())
        }
    }

    /// Adds `share` to row `id` of `repo`.
    pub(crate) fn add(&mut self, id: i64, repo: i64, share: f64) {
        self.adder(repo)(id, share)
    }

    /// Adds shares to rows of one `repo` (a posting-list block's), without looking the repo up
    /// again for each.
    pub(crate) fn adder(&mut self, repo: i64) -> impl FnMut(i64, f64) + '_ {
        // The repo's number in a table's slots (0 in a map, which keeps the repo itself).
        let slot_repo = match self {
            Scores::Table { repo_ids, .. } => {
                let number = match repo_ids.iter().position(|r| *r == repo) {
                    Some(i) => i,
                    None => {
                        repo_ids.push(repo);
                        repo_ids.len() - 1
                    }
                };
                number as u32 + 1
            }
            Scores::Map(_) => 0,
        };
        move |id, share| {
            let map = match self {
                Scores::Table {
                    base,
                    ranks,
                    repos,
                    outside,
                    ..
                } => match usize::try_from(id - *base)
                    .ok()
                    .filter(|i| *i < ranks.len())
                {
                    Some(i) => {
                        ranks[i] += share;
                        repos[i] = slot_repo;
                        return;
                    }
                    None => outside,
                },
                Scores::Map(map) => map,
            };
            map.entry(id).or_insert(Found { repo, rank: 0.0 }).rank += share;
        }
    }

    /// Every found row: its id, repo and score.
    pub(crate) fn rows(&self) -> Box<dyn Iterator<Item = (i64, Found)> + '_> {
        match self {
            Scores::Table {
                base,
                ranks,
                repos,
                repo_ids,
                outside,
            } => Box::new(
                repos
                    .iter()
                    .zip(ranks)
                    .enumerate()
                    .filter(|(_, (repo, _))| **repo != 0)
                    .map(|(i, (repo, rank))| {
                        let found = Found {
                            repo: repo_ids[*repo as usize - 1],
                            rank: *rank,
                        };
                        (*base + i as i64, found)
                    })
                    .chain(outside.iter().map(|(id, f)| (*id, *f))),
            ),
            Scores::Map(map) => Box::new(map.iter().map(|(id, f)| (*id, *f))),
        }
    }

    /// The `n` best rows, by score and then by id, best first (all of them when fewer).
    pub(crate) fn best(&self, n: usize) -> Vec<(i64, Found)> {
        let mut kept: BinaryHeap<Best> = BinaryHeap::with_capacity(n.min(1 << 20) + 1);
        for (id, found) in self.rows() {
            let row = Best(id, found);
            if kept.len() < n {
                kept.push(row);
            } else if let Some(mut worst) = kept.peek_mut() {
                if row < *worst {
                    *worst = row;
                }
            }
        }
        kept.into_sorted_vec()
            .into_iter()
            .map(|Best(id, found)| (id, found))
            .collect()
    }
}

/// A row ordered best first: a higher score, then a lower id, is less (so that a max-heap's
/// top is the worst row kept).
struct Best(i64, Found);

impl Ord for Best {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .1
            .rank
            .total_cmp(&self.1.rank)
            .then(self.0.cmp(&other.0))
    }
}

impl PartialOrd for Best {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Best {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Best {}

#[cfg(test)]
mod tests {
    use super::{Found, Scores};

    fn sorted(scores: &Scores) -> Vec<(i64, Found)> {
        let mut rows: Vec<_> = scores.rows().collect();
        rows.sort_by_key(|(id, _)| *id);
        rows
    }

    #[test]
    fn a_table_and_a_map_find_the_same_rows() {
        // Dense enough for a table (20 entries over ids 100..=139), and too sparse.
        let (mut table, mut map) = (Scores::new(100, 139, 20), Scores::new(100, 10_000, 20));
        assert!(matches!(table, Scores::Table { .. }) && matches!(map, Scores::Map(_)));
        for scores in [&mut table, &mut map] {
            for id in (100..140).step_by(2) {
                scores.add(id, 7, 1.0);
            }
            for id in (100..140).step_by(4) {
                scores.add(id, 7, 0.5);
            }
            // A row of another repo, and rows outside the span (a phrase's).
            scores.add(101, 9, 0.0);
            scores.add(99, 9, 2.0);
            scores.add(5_000, 7, 3.0);
        }
        let rows = sorted(&table);
        assert_eq!(rows, sorted(&map));
        assert_eq!(rows.len(), 23);
        let get = |id| rows.iter().find(|(i, _)| *i == id).map(|(_, f)| *f);
        assert_eq!(get(104), Some(Found { repo: 7, rank: 1.5 }));
        assert_eq!(get(102), Some(Found { repo: 7, rank: 1.0 }));
        assert_eq!(get(101), Some(Found { repo: 9, rank: 0.0 }));
        assert_eq!(get(99), Some(Found { repo: 9, rank: 2.0 }));
        assert_eq!(get(103), None);
        // The best: 5,000 (3.0), 99 (2.0), then the rows at 1.5 by id.
        let best: Vec<i64> = table.best(4).into_iter().map(|(id, _)| id).collect();
        assert_eq!(best, [5_000, 99, 100, 104]);
        assert_eq!(map.best(100).len(), 23);
    }
}
