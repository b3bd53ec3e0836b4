//! Text vectors built by quarry rather than by the server, with the posting-list entries
//! they imply. Measured on one sympy copy (bench/pg_scale.py's corpus, pg_stat_statements and
//! auto_explain, 2 cores): of a 7,421-chunk batch's 1.9 s on the server, 0.56 s went to
//! `to_tsvector` over the staged tokens and 0.9 s to unnesting the new vectors again, packing
//! each entry's counts and grouping them by lexeme for the lists — while quarry, which made
//! those tokens, sat waiting on the other core. Here each distinct token is sent to the
//! server once per process (`to_tsvector('quarry', token)`: the server's parser and stemmer
//! stay the only definition of a lexeme), and the rest happens in quarry: positions, weights
//! and the lists' entries, COPYed straight into place.
//!
//! The vectors equal what `setweight(to_tsvector('quarry', a), 'A') || setweight(…b, 'B') ||
//! …` gives, because this follows PostgreSQL's rules (to_tsany.c, tsvector_op.c) rather than
//! its own: a position past 16,383 counts as 16,383; a lexeme keeps at most 255 positions in
//! one field, none after one at 16,383 and never the same one twice; `||` moves the right
//! side's positions past the left side's highest *stored* position and keeps at most 256. A
//! test compares the stored vectors with the server's expression over real source files and
//! over made-up extremes (tests/postgres.rs). Written by hand: no crate builds PostgreSQL text
//! vectors, and the posting lists (postings.rs) need the counts in quarry's hands anyway.

use std::collections::HashSet;

use anyhow::Result;

use crate::connection::Queries;

/// PostgreSQL's highest position (MAXENTRYPOS - 1): later ones are stored as this.
const LAST_POSITION: u32 = 16_383;
/// Positions one field's vector keeps per lexeme (MAXNUMPOS - 1, to_tsvector's limit).
const FIELD_POSITIONS: usize = 255;
/// Positions a concatenated vector keeps per lexeme (MAXNUMPOS, `||`'s limit).
const ALL_POSITIONS: usize = 256;

/// What one token becomes: its lexemes at their offsets from the token's first position
/// (1-based), and how many positions it takes. Every token quarry writes (lowercase letters
/// and digits) is one lexeme taking one position; the general form keeps any other exact.
#[derive(Clone, Debug, Default)]
struct Expansion {
    lexemes: Vec<(u32, u32)>,
    width: u32,
}

/// The lexemes of every token seen so far, asked of the server once each (a process keeps
/// them: a lexeme depends only on the token and the text search configuration).
#[derive(Default)]
pub(crate) struct Lexicon {
    tokens: foldhash::HashMap<String, Expansion>,
    lexemes: Vec<String>,
    lexeme_ids: foldhash::HashMap<String, u32>,
}

impl Lexicon {
    /// Asks the server for the tokens of `fields` not known yet, in one round trip.
    pub(crate) fn learn<'a>(
        &mut self,
        c: &mut impl Queries,
        fields: impl Iterator<Item = &'a str>,
    ) -> Result<()> {
        let mut unknown: HashSet<&str> = HashSet::new();
        for text in fields {
            for token in text.split_ascii_whitespace() {
                if !self.tokens.contains_key(token) {
                    unknown.insert(token);
                }
            }
        }
        if unknown.is_empty() {
            return Ok(());
        }
        let unknown: Vec<&str> = unknown.into_iter().collect();
        // The token twice: a one-position token's lexeme then stands at 1 and 2, and any
        // other token shows how many positions it takes (its highest position, halved).
        let rows = c.query(
            "SELECT t.i::int4, u.lexeme, u.positions
             FROM unnest($1::text[]) WITH ORDINALITY t(token, i)
             LEFT JOIN LATERAL unnest(to_tsvector('quarry', t.token || ' ' || t.token)) u ON true",
            &[&unknown],
        )?;
        let mut found: Vec<Vec<(String, Vec<i16>)>> = vec![Vec::new(); unknown.len()];
        for row in rows {
            let i = row.get::<_, i32>(0) as usize - 1;
            if let (Some(lexeme), Some(positions)) = (
                row.get::<_, Option<String>>(1),
                row.get::<_, Option<Vec<i16>>>(2),
            ) {
                found[i].push((lexeme, positions));
            }
        }
        for (token, lexemes) in unknown.into_iter().zip(found) {
            let highest = lexemes
                .iter()
                .flat_map(|(_, p)| p.iter().map(|&p| p as u32))
                .max()
                .unwrap_or(0);
            // A token that yields nothing still takes a position, as a stop word does.
            let width = (highest / 2).max(1);
            let mut expansion = Expansion {
                lexemes: Vec::new(),
                width,
            };
            for (lexeme, positions) in lexemes {
                let id = self.id(lexeme);
                for p in positions
                    .into_iter()
                    .map(|p| p as u32)
                    .filter(|&p| p <= width)
                {
                    expansion.lexemes.push((p, id));
                }
            }
            expansion.lexemes.sort_unstable();
            self.tokens.insert(token.to_string(), expansion);
        }
        Ok(())
    }

    fn id(&mut self, lexeme: String) -> u32 {
        if let Some(&id) = self.lexeme_ids.get(&lexeme) {
            return id;
        }
        let id = self.lexemes.len() as u32;
        self.lexemes.push(lexeme.clone());
        self.lexeme_ids.insert(lexeme, id);
        id
    }

    pub(crate) fn lexeme(&self, id: u32) -> &str {
        &self.lexemes[id as usize]
    }

    /// Builds into `vector` the vector of one row: its fields (quarry's space-separated
    /// tokens, every one learnt), weighted A, B, C, D in order and joined with `||`. One pass:
    /// each field's own limits (`to_tsvector`) and the join's are checked as positions arrive.
    pub(crate) fn vector(&self, fields: &[&str], vector: &mut TextVector) {
        vector.clear();
        for (weight, text) in fields.iter().enumerate() {
            let weight = weight as u8;
            // `left || right` moves right's positions past left's highest stored one.
            let shift = vector.highest;
            let mut start = 0u32;
            for token in text.split_ascii_whitespace() {
                let Some(expansion) = self.tokens.get(token) else {
                    continue;
                };
                for &(offset, lexeme) in &expansion.lexemes {
                    let position = (start + offset).min(LAST_POSITION);
                    vector.add(lexeme, weight, position, shift);
                }
                start += expansion.width;
            }
            vector.highest = vector.stored_highest;
        }
    }
}

/// What a text vector knows of one lexeme while it is built.
#[derive(Clone, Copy, Default)]
struct LexemeState {
    lexeme: u32,
    /// Positions stored per weight (A … D).
    counts: [u16; 4],
    /// The field being read, and this lexeme's positions in it so far (its own vector's).
    field: u8,
    field_count: u16,
    field_last: u32,
}

/// A text vector: each lexeme (by its lexicon id) with its positions and their weights (0
/// for A … 3 for D). Reused from row to row (its buffers stay allocated).
#[derive(Default)]
pub(crate) struct TextVector {
    slots: foldhash::HashMap<u32, usize>,
    states: Vec<LexemeState>,
    /// Each slot's positions with their weights, ascending; only the first `states.len()`
    /// are in use.
    positions: Vec<Vec<(u32, u8)>>,
    /// The highest position stored before the current field, and so far.
    highest: u32,
    stored_highest: u32,
}

impl TextVector {
    fn clear(&mut self) {
        self.slots.clear();
        self.states.clear();
        self.highest = 0;
        self.stored_highest = 0;
    }

    /// One occurrence of `lexeme` at `position` of field `weight`, whose positions move by
    /// `shift` when joined.
    fn add(&mut self, lexeme: u32, weight: u8, position: u32, shift: u32) {
        let slot = *self.slots.entry(lexeme).or_insert_with(|| {
            let slot = self.states.len();
            self.states.push(LexemeState {
                lexeme,
                field: u8::MAX,
                ..Default::default()
            });
            if self.positions.len() <= slot {
                self.positions.push(Vec::new());
            }
            self.positions[slot].clear();
            slot
        });
        let state = &mut self.states[slot];
        if state.field != weight {
            state.field = weight;
            state.field_count = 0;
        }
        // The field's own vector (to_tsvector's uniqueWORD): the first position always, later
        // ones while under 255, after no 16,383 and not repeating the last.
        if state.field_count > 0
            && (state.field_count as usize >= FIELD_POSITIONS
                || state.field_last == LAST_POSITION
                || state.field_last == position)
        {
            return;
        }
        state.field_count += 1;
        state.field_last = position;
        // The join (tsvector_concat's add_pos): at most 256, none after 16,383.
        let list = &mut self.positions[slot];
        if list.len() >= ALL_POSITIONS || list.last().is_some_and(|l| l.0 == LAST_POSITION) {
            return;
        }
        let position = (position + shift).min(LAST_POSITION);
        list.push((position, weight));
        state.counts[weight as usize] += 1;
        self.stored_highest = self.stored_highest.max(position);
    }

    /// The vector as `tsvector`'s input text (`'lexeme':1A,5B,9`), written into `out`.
    pub(crate) fn literal<'a>(&self, lexicon: &Lexicon, out: &'a mut String) -> &'a str {
        out.clear();
        let mut numbers = itoa::Buffer::new();
        for (i, (state, positions)) in self.states.iter().zip(&self.positions).enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push('\'');
            for c in lexicon.lexeme(state.lexeme).chars() {
                match c {
                    '\'' => out.push_str("''"),
                    '\\' => out.push_str("\\\\"),
                    c => out.push(c),
                }
            }
            out.push('\'');
            for (j, &(position, weight)) in positions.iter().enumerate() {
                out.push(if j == 0 { ':' } else { ',' });
                out.push_str(numbers.format(position));
                if weight < 3 {
                    out.push((b'A' + weight) as char);
                }
            }
        }
        out
    }

    /// Each lexeme with its posting-list entry's counts (postings.rs's packing) for a row of
    /// `n_tokens` tokens.
    pub(crate) fn entries(&self, n_tokens: usize) -> impl Iterator<Item = (u32, i64)> + '_ {
        self.states
            .iter()
            .map(move |state| (state.lexeme, pack(n_tokens, state.counts.map(i64::from))))
    }
}

/// A posting-list entry's counts packed into one integer (postings.rs's `packed!`, the same in
/// SQL): the row's token count above bit 36, then the lexeme's positions in fields A, B, C and
/// D, 9 bits each.
pub(crate) fn pack(n_tokens: usize, [a, b, c, d]: [i64; 4]) -> i64 {
    ((n_tokens.min(134_217_727) as i64) << 36) | a << 27 | b << 18 | c << 9 | d
}

/// What [`pack`] packed: the row's token count and the positions per field.
pub(crate) fn unpack(stat: i64) -> (i64, [i64; 4]) {
    (
        stat >> 36,
        [
            (stat >> 27) & 511,
            (stat >> 18) & 511,
            (stat >> 9) & 511,
            stat & 511,
        ],
    )
}

/// The posting-list entries a batch adds, gathered per lexeme (written by postings.rs).
#[derive(Default)]
pub(crate) struct NewEntries {
    lists: foldhash::HashMap<u32, (Vec<i64>, Vec<i64>)>,
    pub(crate) rows: i64,
    pub(crate) tokens: i64,
}

impl NewEntries {
    /// Adds row `id` (of `n_tokens` tokens) with its vector.
    pub(crate) fn add(&mut self, id: i64, n_tokens: usize, vector: &TextVector) {
        self.rows += 1;
        self.tokens += n_tokens as i64;
        for (lexeme, stat) in vector.entries(n_tokens) {
            let (ids, stats) = self.lists.entry(lexeme).or_default();
            ids.push(id);
            stats.push(stat);
        }
    }

    /// How many lexemes have new entries.
    pub(crate) fn lexemes(&self) -> usize {
        self.lists.len()
    }

    /// Each lexeme's new entries: the lexeme, its ids and packed counts.
    pub(crate) fn into_lists(self) -> impl Iterator<Item = (u32, Vec<i64>, Vec<i64>)> {
        self.lists
            .into_iter()
            .map(|(lexeme, (ids, stats))| (lexeme, ids, stats))
    }
}
