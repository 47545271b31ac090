//! Times each block's root of a dump with a witness, its tries whole and split into units
//! under several rules, the units on 1 and 2 threads, in alternating rounds (warm: the
//! witness opened in memory once, each round on a copy).
//!
//! ```text
//! gigagas generate --blocks 4 --gas-per-block 300000000 --seed 45 --state-size \
//!     --storage-size -o /tmp/b300.gigagas
//! cargo run --release -p gigagas-trie --example split_timing -- /tmp/b300.gigagas [ROUNDS]
//! ```
//!
//! Prints, per rule and thread count, the median over rounds of the blocks' summed root
//! time, its stages (prepare, storage units, account stage, account units, finish), the
//! serial share (prepare, account stage and finish over the root: what runs between the
//! units) and the units a block is split into.

use gigagas_dump::read_dump;
use gigagas_trie::{AccountTask, PreValues, RootRules, SplitRule, StateTrie, StorageTask};
use rayon::prelude::*;
use std::{path::PathBuf, time::Instant};

/// Nanoseconds of each stage of the root, summed over the blocks.
#[derive(Debug, Default, Clone, Copy)]
struct Stages {
    prepare: u64,
    storage: u64,
    account_stage: u64,
    accounts: u64,
    finish: u64,
    storage_units: usize,
    account_units: usize,
}

impl Stages {
    fn total(&self) -> u64 {
        self.prepare + self.storage + self.account_stage + self.accounts + self.finish
    }

    /// The stages that run between the units, on the root's chain.
    fn serial(&self) -> u64 {
        self.prepare + self.account_stage + self.finish
    }
}

/// Runs `tasks` on `pool` (largest first) or, without one, in turn on this thread.
fn run_all<T: Send, R: Send>(
    pool: Option<&rayon::ThreadPool>,
    tasks: Vec<T>,
    run: impl Fn(T) -> R + Sync + Send,
) -> Vec<R> {
    match pool {
        None => tasks.into_iter().map(run).collect(),
        Some(pool) => pool.install(|| tasks.into_par_iter().with_max_len(1).map(run).collect()),
    }
}

fn one_round(
    base: &[(StateTrie, Vec<&gigagas_dump::DumpBlock>)],
    rule: SplitRule,
    pool: Option<&rayon::ThreadPool>,
) -> Stages {
    let mut st = Stages::default();
    let rules = RootRules::SPURIOUS_DRAGON;
    for (trie, blocks) in base {
        let mut trie = trie.snapshot().with_split(rule);
        for block in blocks {
            let t = Instant::now();
            let mut job = trie.prepare_block(&block.access_list, rules).unwrap();
            let mut tasks = job.storage_tasks();
            tasks.sort_by_key(|t| std::cmp::Reverse(t.writes()));
            st.storage_units += tasks.len();
            let t1 = Instant::now();
            let results = run_all(pool, tasks, StorageTask::run);
            let t2 = Instant::now();
            let mut tasks = job.account_tasks(&mut trie, results).unwrap();
            tasks.sort_by_key(|t| std::cmp::Reverse(t.leaves()));
            st.account_units += tasks.len();
            let t3 = Instant::now();
            let parts = run_all(pool, tasks, AccountTask::run);
            let t4 = Instant::now();
            let root = job.finish_accounts(&mut trie, parts).unwrap();
            let t5 = Instant::now();
            assert_eq!(root, block.header.state_root, "block {}", block.number());
            st.prepare += (t1 - t).as_nanos() as u64;
            st.storage += (t2 - t1).as_nanos() as u64;
            st.account_stage += (t3 - t2).as_nanos() as u64;
            st.accounts += (t4 - t3).as_nanos() as u64;
            st.finish += (t5 - t4).as_nanos() as u64;
        }
    }
    st
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(args.next().expect("usage: split_timing DUMP [ROUNDS]"));
    let rounds: usize = args.next().map_or(7, |r| r.parse().expect("ROUNDS"));
    let (dump, _) = read_dump(&path).expect("the dump reads");
    let base: Vec<(StateTrie, Vec<&gigagas_dump::DumpBlock>)> = dump
        .segments
        .iter()
        .map(|s| {
            let trie = StateTrie::from_witness(s.witness.as_ref().expect("a witness"))
                .unwrap()
                .with_pre_values(PreValues::of_pre_state(&s.pre_state));
            (trie, s.blocks.iter().collect())
        })
        .collect();
    let blocks: usize = base.iter().map(|(_, b)| b.len()).sum();
    let two = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let mut configs: Vec<(String, SplitRule, Option<&rayon::ThreadPool>)> = vec![
        ("whole 1t".into(), SplitRule::WHOLE, None),
        ("whole 2t".into(), SplitRule::WHOLE, Some(&two)),
    ];
    let rules = std::env::var("SPLIT_RULES").unwrap_or_else(|_| "2:64,1:64,2:16,2:256,3:64".into());
    for r in rules.split(',') {
        let (d, m) = r.split_once(':').expect("DEPTH:MIN_LEAVES");
        let rule = SplitRule {
            depth: d.parse().unwrap(),
            min_leaves: m.parse().unwrap(),
        };
        configs.push((format!("d{d} m{m} 1t"), rule, None));
        configs.push((format!("d{d} m{m} 2t"), rule, Some(&two)));
    }
    let mut samples: Vec<Vec<Stages>> = vec![Vec::new(); configs.len()];
    for _ in 0..rounds {
        for (i, (_, rule, pool)) in configs.iter().enumerate() {
            samples[i].push(one_round(&base, *rule, *pool));
        }
    }
    println!("{blocks} blocks, {rounds} rounds alternating; ms a block, median round");
    println!(
        "config        total  prepare  storage  acct-stage  acct-units  finish  serial%  s-units  a-units"
    );
    let ms = |ns: u64| ns as f64 / 1e6 / blocks as f64;
    for (i, (name, _, _)) in configs.iter().enumerate() {
        let mut s = samples[i].clone();
        s.sort_by_key(Stages::total);
        let m = s[s.len() / 2];
        println!(
            "{name:<12} {:>6.2} {:>8.2} {:>8.2} {:>11.2} {:>11.2} {:>7.2} {:>8.1} {:>8} {:>8}",
            ms(m.total()),
            ms(m.prepare),
            ms(m.storage),
            ms(m.account_stage),
            ms(m.accounts),
            ms(m.finish),
            100.0 * m.serial() as f64 / m.total() as f64,
            m.storage_units / blocks,
            m.account_units / blocks,
        );
    }
}
