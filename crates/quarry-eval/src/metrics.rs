//! Ranking metrics over distinct files (or commits), as the shared evaluation README
//! defines them: per query, then the mean over all queries.

use serde::Serialize;

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Metrics {
    pub hit_at_1: f64,
    pub hit_at_5: f64,
    pub hit_at_10: f64,
    pub recall_at_10: f64,
    pub mrr: f64,
    pub ndcg_at_10: f64,
    #[serde(skip)]
    count: usize,
}

impl Metrics {
    /// Adds one query: its top files (at least the first 10), the 1-based rank of the first
    /// relevant file over everything retrieved, and the relevant set.
    pub fn add(&mut self, top: &[String], first_relevant_rank: Option<usize>, relevant: &[String]) {
        self.count += 1;
        if let Some(rank) = first_relevant_rank {
            self.hit_at_1 += (rank <= 1) as u8 as f64;
            self.hit_at_5 += (rank <= 5) as u8 as f64;
            self.hit_at_10 += (rank <= 10) as u8 as f64;
            self.mrr += 1.0 / rank as f64;
        }
        if relevant.is_empty() {
            return;
        }
        let top10 = &top[..top.len().min(10)];
        let found = top10.iter().filter(|f| relevant.contains(f)).count();
        self.recall_at_10 += found as f64 / relevant.len() as f64;
        let dcg: f64 = top10
            .iter()
            .enumerate()
            .filter(|(_, f)| relevant.contains(f))
            .map(|(i, _)| 1.0 / ((i + 2) as f64).log2())
            .sum();
        let ideal: f64 = (0..relevant.len().min(10))
            .map(|i| 1.0 / ((i + 2) as f64).log2())
            .sum();
        self.ndcg_at_10 += dcg / ideal;
    }

    /// Turns the sums into means.
    pub fn finish(&mut self) {
        let n = self.count.max(1) as f64;
        for v in [
            &mut self.hit_at_1,
            &mut self.hit_at_5,
            &mut self.hit_at_10,
            &mut self.recall_at_10,
            &mut self.mrr,
            &mut self.ndcg_at_10,
        ] {
            *v /= n;
        }
    }
}

/// Function-level hits: the rank of the first result (chunk) overlapping a labelled
/// definition, over the queries that have such labels.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct FunctionMetrics {
    pub queries: usize,
    pub hit_at_1: f64,
    pub hit_at_5: f64,
    pub hit_at_10: f64,
    pub mrr: f64,
}

impl FunctionMetrics {
    pub fn add(&mut self, rank: Option<usize>) {
        self.queries += 1;
        if let Some(rank) = rank {
            self.hit_at_1 += (rank <= 1) as u8 as f64;
            self.hit_at_5 += (rank <= 5) as u8 as f64;
            self.hit_at_10 += (rank <= 10) as u8 as f64;
            self.mrr += 1.0 / rank as f64;
        }
    }

    pub fn finish(&mut self) {
        let n = self.queries.max(1) as f64;
        for v in [
            &mut self.hit_at_1,
            &mut self.hit_at_5,
            &mut self.hit_at_10,
            &mut self.mrr,
        ] {
            *v /= n;
        }
    }
}

/// The `q`-quantile (0..=1) by nearest rank; 0 for no samples.
pub fn percentile(samples: &mut [f64], q: f64) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    samples.sort_by(|a, b| a.total_cmp(b));
    let rank = ((q * samples.len() as f64).ceil() as usize).clamp(1, samples.len());
    samples[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn metrics_follow_their_definitions() {
        let mut m = Metrics::default();
        // relevant a at rank 2 of [x, a, y]; b never found
        m.add(&s(&["x", "a", "y"]), Some(2), &s(&["a", "b"]));
        // miss
        m.add(&s(&["x"]), None, &s(&["c"]));
        m.finish();
        assert_eq!(m.hit_at_1, 0.0);
        assert_eq!(m.hit_at_5, 0.5);
        assert_eq!(m.mrr, 0.25);
        assert_eq!(m.recall_at_10, 0.25);
        let ndcg_first = (1.0 / 3f64.log2()) / (1.0 + 1.0 / 3f64.log2());
        assert!((m.ndcg_at_10 - ndcg_first / 2.0).abs() < 1e-12);
    }

    #[test]
    fn percentile_by_nearest_rank() {
        let mut v = vec![5.0, 1.0, 3.0, 2.0, 4.0];
        assert_eq!(percentile(&mut v, 0.5), 3.0);
        assert_eq!(percentile(&mut v, 0.95), 5.0);
        assert_eq!(percentile(&mut [], 0.5), 0.0);
    }
}
