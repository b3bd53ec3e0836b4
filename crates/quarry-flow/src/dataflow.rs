//! Reaching definitions over a function's graph, and what follows from them: def-use pairs
//! and slices. Names only: two variables of one name in nested scopes are one variable here
//! (shadowing is seen where a nested function starts, not inside one function), and a field
//! or a global is its name — approximate, as the answers say.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

use crate::graph::{Graph, EXIT};

/// For every statement, the definitions `(variable, statement)` that reach its entry.
pub(crate) fn reaching(graph: &Graph) -> Vec<HashSet<(String, usize)>> {
    let n = graph.stmts.len();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(from, to, _) in &graph.edges {
        preds[to].push(from);
    }
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(from, to, _) in &graph.edges {
        succs[from].push(to);
    }
    let mut in_sets: Vec<HashSet<(String, usize)>> = vec![HashSet::new(); n];
    let mut out_sets: Vec<HashSet<(String, usize)>> = vec![HashSet::new(); n];
    let mut queue: VecDeque<usize> = (0..n).collect();
    let mut queued = vec![true; n];
    while let Some(s) = queue.pop_front() {
        queued[s] = false;
        let mut incoming: HashSet<(String, usize)> = HashSet::new();
        for &p in &preds[s] {
            incoming.extend(out_sets[p].iter().cloned());
        }
        let defs = &graph.stmts[s].defs;
        let mut out: HashSet<(String, usize)> = incoming
            .iter()
            .filter(|(v, _)| !defs.contains(v))
            .cloned()
            .collect();
        // A change in place adds a definition and replaces none.
        out.extend(
            defs.iter()
                .chain(&graph.stmts[s].weak_defs)
                .map(|v| (v.clone(), s)),
        );
        in_sets[s] = incoming;
        if out != out_sets[s] {
            out_sets[s] = out;
            for &next in &succs[s] {
                if !queued[next] {
                    queued[next] = true;
                    queue.push_back(next);
                }
            }
        }
    }
    in_sets
}

/// For every statement, the statements whose outcome decides whether it runs (control
/// dependence: `a` decides `b` when one of `a`'s ways out always leads to `b` and another may
/// not), from the graph's post-dominators (Cooper, Harvey and Kennedy's iteration on the
/// reversed graph). A statement that cannot reach the exit depends on nothing here.
pub(crate) fn control_dependences(graph: &Graph) -> Vec<Vec<usize>> {
    let n = graph.stmts.len();
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(from, to, _) in &graph.edges {
        if !succs[from].contains(&to) {
            succs[from].push(to);
            preds[to].push(from);
        }
    }
    // Post-order of the reversed graph from the exit.
    let mut order: Vec<usize> = Vec::with_capacity(n);
    let mut visited = vec![false; n];
    let mut stack: Vec<(usize, usize)> = vec![(EXIT, 0)];
    visited[EXIT] = true;
    while let Some(&mut (v, ref mut i)) = stack.last_mut() {
        if *i < preds[v].len() {
            let p = preds[v][*i];
            *i += 1;
            if !visited[p] {
                visited[p] = true;
                stack.push((p, 0));
            }
        } else {
            order.push(v);
            stack.pop();
        }
    }
    let mut position = vec![usize::MAX; n];
    for (i, &v) in order.iter().enumerate() {
        position[v] = i;
    }
    let mut ipdom: Vec<Option<usize>> = vec![None; n];
    ipdom[EXIT] = Some(EXIT);
    let mut changed = true;
    while changed {
        changed = false;
        for &v in order.iter().rev() {
            if v == EXIT {
                continue;
            }
            let mut new: Option<usize> = None;
            for &s in &succs[v] {
                if ipdom[s].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => s,
                    Some(mut a) => {
                        let mut b = s;
                        while a != b {
                            while position[a] < position[b] {
                                a = ipdom[a].unwrap_or(EXIT);
                            }
                            while position[b] < position[a] {
                                b = ipdom[b].unwrap_or(EXIT);
                            }
                        }
                        a
                    }
                });
            }
            if new.is_some() && ipdom[v] != new {
                ipdom[v] = new;
                changed = true;
            }
        }
    }
    let mut deps: Vec<Vec<usize>> = vec![Vec::new(); n];
    for a in 0..n {
        if succs[a].len() < 2 || ipdom[a].is_none() {
            continue;
        }
        for &b in &succs[a] {
            let mut runner = Some(b);
            let mut steps = 0;
            while let Some(r) = runner {
                if Some(r) == ipdom[a] || steps > n {
                    break;
                }
                if !deps[r].contains(&a) {
                    deps[r].push(a);
                }
                runner = ipdom[r].filter(|&up| up != r);
                steps += 1;
            }
        }
    }
    deps
}

/// `(variable, defining statement, using statement)` for every use a definition reaches.
pub(crate) fn def_use(
    graph: &Graph,
    reach: &[HashSet<(String, usize)>],
) -> Vec<(String, usize, usize)> {
    let mut pairs = Vec::new();
    for (s, stmt) in graph.stmts.iter().enumerate() {
        for v in &stmt.uses {
            for (var, d) in &reach[s] {
                if var == v {
                    pairs.push((v.clone(), *d, s));
                }
            }
        }
    }
    pairs.sort_by(|a, b| (a.1, a.2, &a.0).cmp(&(b.1, b.2, &b.0)));
    pairs
}

/// Every statement reached from `seeds` (each with `var`, or none) by `step`, which pushes
/// the statements one depends on (or reaches) given the variable it is asked about. The
/// worklist both slices run.
fn closure(
    seeds: &[usize],
    var: Option<&str>,
    mut step: impl FnMut(usize, Option<&String>, &mut VecDeque<(usize, Option<String>)>),
) -> BTreeSet<usize> {
    let mut slice: BTreeSet<usize> = BTreeSet::new();
    let mut work: VecDeque<(usize, Option<String>)> = seeds
        .iter()
        .map(|&s| (s, var.map(str::to_string)))
        .collect();
    let mut seen: HashSet<(usize, Option<String>)> = HashSet::new();
    while let Some((s, only)) = work.pop_front() {
        if !seen.insert((s, only.clone())) {
            continue;
        }
        slice.insert(s);
        step(s, only.as_ref(), &mut work);
    }
    slice
}

/// The statements a backward slice from `seeds` holds: what can change the seeds' variables
/// (`var`, or all they read) — the definitions reaching them, what those read in turn, and
/// the headers deciding whether each runs.
pub(crate) fn backward(
    graph: &Graph,
    reach: &[HashSet<(String, usize)>],
    seeds: &[usize],
    var: Option<&str>,
) -> BTreeSet<usize> {
    let deciders = control_dependences(graph);
    closure(seeds, var, |s, only, work| {
        let stmt = &graph.stmts[s];
        let wanted: Vec<&String> = match only {
            // The seed's variable: as it is read there, or as it is defined there.
            Some(v) => stmt
                .uses
                .iter()
                .chain(stmt.defs.iter())
                .filter(|u| *u == v)
                .collect(),
            None => stmt.uses.iter().collect(),
        };
        for v in wanted {
            for (var, d) in &reach[s] {
                if var == v {
                    work.push_back((*d, None));
                }
            }
        }
        for &h in &deciders[s] {
            work.push_back((h, None));
        }
    })
}

/// The statements a forward slice from `seeds` holds: what the seeds' definitions (of `var`,
/// or all) reach, transitively, and what runs under a header they decide.
pub(crate) fn forward(
    graph: &Graph,
    reach: &[HashSet<(String, usize)>],
    seeds: &[usize],
    var: Option<&str>,
) -> BTreeSet<usize> {
    // Who uses each definition.
    let mut users: HashMap<(String, usize), Vec<usize>> = HashMap::new();
    for (var, d, u) in def_use(graph, reach) {
        users.entry((var, d)).or_default().push(u);
    }
    let mut controlled: HashMap<usize, Vec<usize>> = HashMap::new();
    for (s, deciders) in control_dependences(graph).into_iter().enumerate() {
        for h in deciders {
            controlled.entry(h).or_default().push(s);
        }
    }
    closure(seeds, var, |s, only, work| {
        for v in graph.stmts[s]
            .defs
            .iter()
            .filter(|d| only.is_none_or(|o| o == *d))
        {
            for &u in users.get(&(v.clone(), s)).into_iter().flatten() {
                work.push_back((u, None));
            }
        }
        for &c in controlled.get(&s).into_iter().flatten() {
            work.push_back((c, None));
        }
    })
}
