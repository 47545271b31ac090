//! Sweep configs: TOML files describing a benchmark grid.
//!
//! ```toml
//! description = "Schedulers on normal blocks and on mega-blocks"
//! dumps = ["../dumps/mainnet-like.gigagas"]   # files or folders, relative to this file's folder
//! threads = [1, 2]
//! batch = [1, 50]
//! schedulers = ["ols", "gas-used", "gas-limit"]
//! recover_senders = [false]   # default [false]
//! receipts = false            # default false: build every receipt with its logs bloom inside
//!                             # the timed window, on the sequential loop and the replay alike
//! state_root = ["off"]        # default ["off"]: "after" / "overlapped" add each block's state
//!                             # root (from the dump's witness) after or beside its transactions
//! persist = ["none"]          # default ["none"]: "block" commits each block into the state
//!                             # store after its root, synced; "background" hands it to a
//!                             # writer thread that commits in groups (store points with a
//!                             # root only; `false` / `true` read as "none" / "block")
//! backlog = { threshold = 7, buffer = 5, backpressure = 16 }
//!                             # default reth's: the background writer's limits in blocks
//! warmup = 1                  # default 1
//! repeats = 3                 # default 3
//! sequential = true           # default false: also run the sequential baseline
//! all_cores = false           # default false: also run every point on all the machine's cores
//! min_sample_ms = 100         # default 100: a measured sample replays the dump until its
//!                             # timed passes last this long (figures are per pass)
//!
//! [simulate]                  # optional: the schedule simulator on each dump
//! threads = [1, 2, 4, 16, 64, 192]
//! batch = [1, 50]
//! schedulers = ["ols", "gas-used", "gas-limit"]
//! profile_repeats = 3         # default 3: one-thread runs whose per-item medians are used
//! validate_threads = [1, 2]   # default [1, 2]: predicted vs measured at these counts
//! item_slowdown = 1.05        # optional: one item time factor above one thread (default: measured per thread count)
//! ```
//!
//! Relative dump paths are resolved against the folder of the config file, so a config
//! works from any working directory. A folder stands for the `*.gigagas` files directly
//! inside it, sorted by name (a suite: one row per dump and grid point, and a suite total
//! per grid point). A state store (`state = "DIR"`) serves one dump; `stores = ["A", "B"]`
//! names one per dump, in the order of `dumps`. Unknown keys, empty lists, zero thread counts,
//! batch sizes or repeats, and missing dumps are rejected with one error naming the file
//! and the key.

use crate::plan::{
    self, ItemSlowdown, MAX_THREADS, MAX_VIRTUAL_WORKERS, MinSample, NonEmpty, Plan, PlanError,
    SimulatePlan, StoreDirs, SuiteDump,
};
use gigagas_grid::{SimulateConfig, SweepConfig};
use std::path::{Path, PathBuf};

/// Why a sweep config is rejected. The message names the file and the key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{}: {source}", file.display())]
    Read {
        /// The config file.
        file: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid TOML or does not match the format (unknown key, wrong type).
    #[error("{}:{line}: {message}", file.display())]
    Syntax {
        /// The config file.
        file: PathBuf,
        /// 1-based line of the error.
        line: usize,
        /// The parser's message, with the key.
        message: String,
    },
    /// A key has a value the sweep cannot run with.
    #[error("{}: key `{key}`: {problem}", file.display())]
    Invalid {
        /// The config file.
        file: PathBuf,
        /// The offending key (`simulate.threads` for keys of the `[simulate]` section).
        key: &'static str,
        /// What is wrong with its value.
        problem: PlanError,
    },
    /// An entry of `dumps` names no dump.
    #[error("{}: key `dumps`: {}: {problem} (resolved to {}{})", file.display(), entry.display(),
        resolved.display(), if matches!(problem, DumpsProblem::Missing) {
            "; paths are relative to the config file's folder" } else { "" })]
    Dumps {
        /// The config file.
        file: PathBuf,
        /// The entry as the file writes it.
        entry: PathBuf,
        /// The entry resolved against the config file's folder.
        resolved: PathBuf,
        /// What is wrong with it.
        problem: DumpsProblem,
    },
}

/// Why an entry of a sweep config's `dumps` names no dump.
#[derive(Debug, thiserror::Error)]
pub enum DumpsProblem {
    /// Neither a file nor a folder.
    #[error("no such file or folder")]
    Missing,
    /// A folder without `*.gigagas` files.
    #[error("no *.gigagas files in this folder")]
    EmptyFolder,
    /// A label given to a folder of dumps (a label names one dump).
    #[error("a label names one dump file, and this is a folder of dumps")]
    LabelOnFolder,
    /// A folder that could not be listed.
    #[error("{0}")]
    Unreadable(std::io::Error),
    /// Neither a regular file nor a folder (a FIFO, a device, a socket): refused by its
    /// metadata, never opened.
    #[error("not a regular file ({0}): refusing to read it")]
    NotARegularFile(gigagas_fs_util::FileKind),
}

/// The largest sweep config file read, bytes.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// A loaded, validated sweep config.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    /// Name: the file stem (`bench-configs/schedulers.toml` → `schedulers`), used as the
    /// results folder `results/<name>/`.
    pub name: String,
    /// The config file.
    pub file: PathBuf,
    /// What the file asks for, checked, with its dumps resolved against the file's folder
    /// and folders expanded (each dump's label is its path as the config names it: a folder
    /// entry joined with the file name).
    pub plan: Plan,
}

/// The dump files `config` names, each entry resolved against `file`'s folder: a file, or
/// a folder's `*.gigagas` files by name; a missing, empty or irregular entry is refused.
fn resolve_dumps(config: &SweepConfig, file: &Path) -> Result<Vec<SuiteDump>, ConfigError> {
    let dir = file.parent().unwrap_or(Path::new(""));
    let mut dumps = Vec::with_capacity(config.dumps.len());
    for entry in &config.dumps {
        let d = &entry.path;
        let p = if d.is_absolute() {
            d.clone()
        } else {
            dir.join(d)
        };
        let invalid = |problem| ConfigError::Dumps {
            file: file.to_path_buf(),
            entry: d.clone(),
            resolved: p.clone(),
            problem,
        };
        if p.is_dir() {
            if entry.label.is_some() {
                return Err(invalid(DumpsProblem::LabelOnFolder));
            }
            let files = dumps_in_folder(&p).map_err(|e| invalid(DumpsProblem::Unreadable(e)))?;
            if files.is_empty() {
                return Err(invalid(DumpsProblem::EmptyFolder));
            }
            dumps.extend(files.into_iter().map(|f| {
                SuiteDump {
                    named: d
                        .join(f.file_name().unwrap_or_default())
                        .display()
                        .to_string(),
                    path: f,
                    label: None,
                }
            }));
        } else if p.is_file() {
            dumps.push(SuiteDump {
                named: d.display().to_string(),
                path: p,
                label: entry.label.clone(),
            });
        } else if let Ok(meta) = std::fs::metadata(&p) {
            return Err(invalid(DumpsProblem::NotARegularFile(
                gigagas_fs_util::FileKind::of(&meta),
            )));
        } else {
            return Err(invalid(DumpsProblem::Missing));
        }
    }
    Ok(dumps)
}

/// Read, parse and validate a config file into its [`Plan`]; relative dump paths are
/// resolved against the file's folder and must exist.
pub fn load(file: &Path) -> Result<Sweep, ConfigError> {
    let read = |source| ConfigError::Read {
        file: file.to_path_buf(),
        source,
    };
    let bytes = gigagas_report::output::read_bounded(file, MAX_CONFIG_BYTES).map_err(read)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        read(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not UTF-8 text: {e}"),
        ))
    })?;
    let config = parse(&text, file)?;
    let dir = file.parent().unwrap_or(Path::new(""));
    let dumps = resolve_dumps(&config, file)?;
    // Every store named is there; with one store per dump, every entry of `dumps` is one
    // dump file, so the stores pair with the dumps in order.
    let stores = config.state.iter().map(|s| ("state", s));
    for (key, store) in stores.chain(config.stores.iter().map(|s| ("stores", s))) {
        let p = if store.is_absolute() {
            store.clone()
        } else {
            dir.join(store)
        };
        if !p.is_dir() {
            return Err(ConfigError::Invalid {
                file: file.to_path_buf(),
                key,
                problem: PlanError::NoStore { dir: p },
            });
        }
    }
    if !config.stores.is_empty()
        && let Some(entry) = config.dumps.iter().map(|d| &d.path).find(|d| {
            if d.is_absolute() {
                d.is_dir()
            } else {
                dir.join(d).is_dir()
            }
        })
    {
        return Err(ConfigError::Invalid {
            file: file.to_path_buf(),
            key: "stores",
            problem: PlanError::StoresWithFolder {
                entry: entry.clone(),
            },
        });
    }
    let name = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "sweep".into());
    Ok(Sweep {
        name,
        file: file.to_path_buf(),
        plan: plan_of(&config, file, dumps)?,
    })
}

/// Parse and validate config text (`file` only names it in errors; dump paths are not
/// checked here): every setting must make a [`Plan`].
pub fn parse(text: &str, file: &Path) -> Result<SweepConfig, ConfigError> {
    let config: SweepConfig = toml::from_str(text).map_err(|e| syntax_error(file, text, &e))?;
    // The dumps as written stand in for the resolved ones.
    let named = config
        .dumps
        .iter()
        .map(|d| SuiteDump {
            path: d.path.clone(),
            named: d.path.display().to_string(),
            label: d.label.clone(),
        })
        .collect();
    plan_of(&config, file, named)?;
    Ok(config)
}

/// The `[simulate]` section's plan, every key checked, an error naming the file and key.
fn simulate_plan_of(sim: &SimulateConfig, file: &Path) -> Result<SimulatePlan, ConfigError> {
    let bad = |key: &'static str| {
        move |problem| ConfigError::Invalid {
            file: file.to_path_buf(),
            key,
            problem,
        }
    };
    Ok(SimulatePlan {
        threads: plan::thread_counts(&sim.threads, MAX_VIRTUAL_WORKERS)
            .map_err(bad("simulate.threads"))?,
        batch: plan::batch_sizes(&sim.batch).map_err(bad("simulate.batch"))?,
        schedulers: plan::schedulers(&sim.schedulers).map_err(bad("simulate.schedulers"))?,
        validate_threads: plan::thread_counts_or_none(&sim.validate_threads, MAX_THREADS)
            .map_err(bad("simulate.validate_threads"))?,
        profile_repeats: plan::profile_repeats(sim.profile_repeats)
            .map_err(bad("simulate.profile_repeats"))?,
        item_slowdown: sim
            .item_slowdown
            .map(ItemSlowdown::new)
            .transpose()
            .map_err(bad("simulate.item_slowdown"))?,
    })
}

/// The plan of `config` over `dumps` (the config's dumps, resolved): every key
/// checked, an error naming the file and the first bad key.
pub fn plan_of(
    config: &SweepConfig,
    file: &Path,
    dumps: Vec<SuiteDump>,
) -> Result<Plan, ConfigError> {
    let bad = |key: &'static str| {
        move |problem| ConfigError::Invalid {
            file: file.to_path_buf(),
            key,
            problem,
        }
    };
    let dumps = NonEmpty::new(dumps).map_err(bad("dumps"))?;
    plan::dump_labels(&dumps).map_err(bad("dumps"))?;
    if let Some(d) = config.layout.repeated() {
        return Err(bad("layout")(PlanError::RepeatedDimension(d)));
    }
    let threads = plan::thread_counts(&config.threads, MAX_THREADS).map_err(bad("threads"))?;
    let batch = plan::batch_sizes(&config.batch).map_err(bad("batch"))?;
    let schedulers = plan::schedulers(&config.schedulers).map_err(bad("schedulers"))?;
    let recover_senders =
        NonEmpty::new(config.recover_senders.clone()).map_err(bad("recover_senders"))?;
    let warmup = plan::warmup(config.warmup).map_err(bad("warmup"))?;
    let repeats = plan::repeats(config.repeats).map_err(bad("repeats"))?;
    let min_sample = MinSample::from_ms(config.min_sample_ms).map_err(bad("min_sample_ms"))?;
    let simulate = config
        .simulate
        .as_ref()
        .map(|sim| simulate_plan_of(sim, file))
        .transpose()?;
    let state = {
        let resolve = |d: &PathBuf| {
            if d.is_absolute() {
                d.clone()
            } else {
                file.parent().unwrap_or(Path::new("")).join(d)
            }
        };
        let dirs = match (&config.state, config.stores.is_empty()) {
            (Some(_), false) => return Err(bad("stores")(PlanError::StateAndStores)),
            (Some(dir), true) => Some(StoreDirs::One(resolve(dir))),
            (None, false) => Some(StoreDirs::PerDump(
                NonEmpty::new(config.stores.iter().map(resolve).collect())
                    .expect("a non-empty list"),
            )),
            (None, true) => None,
        };
        plan::store_plan(
            dirs,
            dumps.len(),
            &config.io,
            &config.cache,
            &config.bal_design,
            config.io_threads,
            config.memory,
        )
        .map_err(|e| ConfigError::Invalid {
            file: file.to_path_buf(),
            key: e.setting.key(),
            problem: e.problem,
        })?
    };
    Ok(Plan {
        description: config.description.clone(),
        named_dumps: config.dumps.clone(),
        dumps,
        threads,
        all_cores: config.all_cores,
        batch,
        schedulers,
        claims: gigagas_grid::Claims::Chunked,
        recover_senders,
        receipts: config.receipts,
        state_root: NonEmpty::new(config.state_root.clone()).map_err(bad("state_root"))?,
        persist: plan::persist_settings(
            config.persist.clone(),
            state.is_some(),
            &config.state_root,
        )
        .map_err(bad("persist"))?,
        backlog: config.backlog,
        baseline: config.sequential,
        parallel: true,
        warmup,
        repeats,
        min_sample,
        seed: config.seed,
        verify: true,
        trace: false,
        cpu_profile: None,
        collapse_single_transaction_blocks: false,
        simulate,
        state,
        layout: config.layout.clone(),
    })
}

/// The `*.gigagas` files directly inside `dir`, sorted by name.
pub fn dumps_in_folder(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_file() && path.extension().is_some_and(|x| x == "gigagas") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Turn a toml error into one line: `file:line: key `k`: message`.
fn syntax_error(file: &Path, text: &str, e: &toml::de::Error) -> ConfigError {
    let (line, key) = match e.span() {
        Some(span) => {
            let start = span.start.min(text.len());
            let line_no = text[..start].matches('\n').count() + 1;
            let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
            let line_text = text[line_start..].lines().next().unwrap_or("");
            let section = text[..line_start]
                .lines()
                .filter_map(|l| {
                    l.trim()
                        .strip_prefix('[')
                        .and_then(|l| l.split_once(']'))
                        .map(|(t, _)| t.trim())
                })
                .rfind(|t| {
                    !t.is_empty()
                        && t.chars()
                            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
                });
            let key = line_text
                .split_once('=')
                .map(|(k, _)| k.trim().trim_matches('"').to_string())
                .filter(|k| !k.is_empty() && !k.starts_with('['))
                .map(|k| match section {
                    Some(t) => format!("{t}.{k}"),
                    None => k,
                });
            (line_no, key)
        }
        None => (1, None),
    };
    let message = e.message().trim().replace('\n', " ");
    let message = match key {
        Some(k) if !message.contains(&format!("`{k}`")) => format!("key `{k}`: {message}"),
        _ => message,
    };
    ConfigError::Syntax {
        file: file.to_path_buf(),
        line,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{MAX_REPEATS, MAX_WARMUP, plain};
    use std::num::NonZeroUsize;

    const GOOD: &str = r#"
dumps = ["../dumps/mainnet-like.gigagas"]
threads = [1, 2]
batch = [1, 50]
schedulers = ["ols", "gas-used"]
"#;

    fn err(text: &str) -> String {
        parse(text, Path::new("bench-configs/x.toml"))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn parses_with_defaults() {
        let c = parse(GOOD, Path::new("x.toml")).unwrap();
        assert_eq!(c.recover_senders, [false]);
        assert_eq!(
            (c.warmup, c.repeats, c.sequential),
            (1, 10, true),
            "the defaults of gigagas run"
        );
        assert_eq!((c.all_cores, c.min_sample_ms), (false, 100));
        let plan = |c: &SweepConfig| {
            let dump = SuiteDump {
                path: "d".into(),
                named: "d".into(),
                label: None,
            };
            plan_of(c, Path::new("x.toml"), vec![dump]).unwrap()
        };
        let all = parse(&format!("{GOOD}all_cores = true\n"), Path::new("x.toml")).unwrap();
        let [two, eight] = [2, 8].map(|n| NonZeroUsize::new(n).unwrap());
        let counts = |cores| plain(&plan(&all).thread_counts(cores));
        assert_eq!(counts(eight), [1, 2, 8]);
        assert_eq!(counts(two), [1, 2]);
        assert_eq!(plan(&all).points(eight).len(), 3 * 2 * 2);
        assert_eq!(plan(&c).points(eight).len(), 2 * 2 * 2);
        assert!(c.simulate.is_none());
        // The plan records what the file says.
        assert_eq!(plan(&c).record(), c);
    }

    #[test]
    fn unknown_key_is_named() {
        let e = err(&format!("{GOOD}\nrepeat = 3\n"));
        assert!(e.starts_with("bench-configs/x.toml:7: "), "{e}");
        assert!(e.contains("unknown field `repeat`"), "{e}");
        let e = err(&format!(
            "{GOOD}\n[simulate]\nthreads = [4]\nbatch = [1]\nschedulers = [\"ols\"]\nfoo = 1\n"
        ));
        assert!(e.contains("unknown field `foo`"), "{e}");
    }

    #[test]
    fn wrong_type_names_the_key() {
        let e = err("dumps = [\"a\"]\nthreads = \"two\"\nbatch = [1]\nschedulers = [\"ols\"]\n");
        assert!(
            e.starts_with("bench-configs/x.toml:2: key `threads`"),
            "{e}"
        );
        let e = err("dumps = [\"a\"]\nthreads = [1]\nbatch = [1]\nschedulers = [\"fifo\"]\n");
        assert!(e.contains("fifo") && e.contains("schedulers"), "{e}");
        let e = err(&format!(
            "{GOOD}[simulate]\nthreads = [4]\nbatch = [1]\nschedulers = [\"lifo\"]\n"
        ));
        assert!(
            e.contains(":9: key `simulate.schedulers`: unknown variant `lifo`"),
            "{e}"
        );
    }

    /// A scheduler of one's own is read as a name alone: a config cannot run it.
    #[test]
    fn ones_own_scheduler_is_refused() {
        let e =
            err("dumps = [\"a\"]\nthreads = [1]\nbatch = [1]\nschedulers = [{ own = \"mine\" }]\n");
        assert_eq!(
            e,
            "bench-configs/x.toml: key `schedulers`: `mine` is a scheduler of one's own: it runs from the program that defines it"
        );
    }

    #[test]
    fn empty_grid_and_zero_threads_are_rejected() {
        let e = err("dumps = [\"a\"]\nthreads = []\nbatch = [1]\nschedulers = [\"ols\"]\n");
        assert_eq!(
            e,
            "bench-configs/x.toml: key `threads`: empty list: the grid would have no points"
        );
        let e = err("dumps = [\"a\"]\nthreads = [1, 0]\nbatch = [1]\nschedulers = [\"ols\"]\n");
        assert_eq!(
            e,
            "bench-configs/x.toml: key `threads`: 0 is not a thread count"
        );
        let e = err("dumps = []\nthreads = [1]\nbatch = [1]\nschedulers = [\"ols\"]\n");
        assert!(e.contains("key `dumps`"), "{e}");
        let e = err("dumps = [\"a\"]\nthreads = [1]\nbatch = [0]\nschedulers = [\"ols\"]\n");
        assert!(e.contains("key `batch`: 0 is not a batch size"), "{e}");
        let e = err(&format!("{GOOD}repeats = 0\n"));
        assert!(e.contains("key `repeats`"), "{e}");
        let e = err(&format!(
            "{GOOD}[simulate]\nthreads = [0]\nbatch = [1]\nschedulers = [\"ols\"]\n"
        ));
        assert!(
            e.contains("key `simulate.threads`: 0 is not a thread count"),
            "{e}"
        );
    }

    #[test]
    fn thread_counts_and_sample_times_have_stated_limits() {
        let e =
            err("dumps = [\"a\"]\nthreads = [1, 100000]\nbatch = [1]\nschedulers = [\"ols\"]\n");
        assert!(
            e.contains("key `threads`: 100000 threads is over the limit of 1024"),
            "{e}"
        );
        let e = err(&format!("{GOOD}warmup = 1001\n"));
        assert!(
            e.ends_with("key `warmup`: 1001 warm-up passes is over the limit of 1000 per point"),
            "{e}"
        );
        let e = err(&format!("{GOOD}repeats = 10001\n"));
        assert!(
            e.ends_with("key `repeats`: 10001 runs is over the limit of 10000 per point"),
            "{e}"
        );
        let c = parse(
            &format!("{GOOD}warmup = 1000\nrepeats = 10000\n"),
            Path::new("x.toml"),
        )
        .unwrap();
        assert_eq!((c.warmup, c.repeats), (MAX_WARMUP, MAX_REPEATS));
        let e = err(&format!("{GOOD}min_sample_ms = 60001\n"));
        assert!(
            e.contains("key `min_sample_ms`: 60001 ms is over the limit of 60000 ms"),
            "{e}"
        );
        let e = err(&format!(
            "{GOOD}[simulate]\nthreads = [4]\nbatch = [1]\nschedulers = [\"ols\"]\nvalidate_threads = [100000]\n"
        ));
        assert!(e.contains("key `simulate.validate_threads`"), "{e}");
        parse(&format!("{GOOD}min_sample_ms = 60000\n"), Path::new("x")).unwrap();
    }

    #[test]
    fn config_files_must_be_regular_and_small() {
        let e = load(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(e.contains("/dev/zero: not a regular file"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.toml");
        std::fs::write(&big, vec![b'#'; MAX_CONFIG_BYTES as usize + 1]).unwrap();
        let e = load(&big).unwrap_err().to_string();
        assert!(e.contains("over the limit"), "{e}");
    }

    /// `stores` names one store per dump, in order: each dump's store points read its own;
    /// a count that differs, `state` beside it, a folder of dumps and a missing store are
    /// each refused in one line naming the file and the key.
    #[test]
    fn stores_pair_with_dumps_in_order() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.gigagas", "b.gigagas"] {
            std::fs::write(dir.path().join(name), b"").unwrap();
        }
        for store in ["sa", "sb"] {
            std::fs::create_dir(dir.path().join(store)).unwrap();
        }
        std::fs::create_dir(dir.path().join("suite")).unwrap();
        std::fs::write(dir.path().join("suite/c.gigagas"), b"").unwrap();
        let file = dir.path().join("c.toml");
        let config = |extra: &str| {
            format!("threads = [1]\nbatch = [1]\nschedulers = [\"ols\"]\nmemory = false\n{extra}\n")
        };
        let load_text = |text: String| {
            std::fs::write(&file, text).unwrap();
            load(&file)
        };
        let sweep = load_text(config(
            "dumps = [\"a.gigagas\", \"b.gigagas\"]\nstores = [\"sa\", \"sb\"]",
        ))
        .unwrap();
        let state = sweep.plan.state.as_ref().unwrap();
        assert_eq!(state.dir_of(0), dir.path().join("sa"));
        assert_eq!(state.dir_of(1), dir.path().join("sb"));
        assert_eq!(
            sweep.plan.record().stores,
            [dir.path().join("sa"), dir.path().join("sb")]
        );
        assert_eq!(sweep.plan.record().state, None);
        let shown = file.display().to_string();
        let refused = |extra: &str| load_text(config(extra)).unwrap_err().to_string();
        assert_eq!(
            refused("dumps = [\"a.gigagas\", \"b.gigagas\"]\nstores = [\"sa\"]"),
            format!(
                "{shown}: key `stores`: 1 store(s) for 2 dump(s): name one store per entry of `dumps`, in the same order"
            )
        );
        assert_eq!(
            refused("dumps = [\"a.gigagas\"]\nstate = \"sa\"\nstores = [\"sa\"]"),
            format!(
                "{shown}: key `stores`: `state` names one store for one dump and `stores` one per dump: give one of the two"
            )
        );
        assert_eq!(
            refused("dumps = [\"suite\"]\nstores = [\"sa\"]"),
            format!(
                "{shown}: key `stores`: suite is a folder of dumps: with `stores`, every entry of `dumps` names one dump file (its store beside it in `stores`)"
            )
        );
        let missing = refused("dumps = [\"a.gigagas\", \"b.gigagas\"]\nstores = [\"sa\", \"sc\"]");
        assert!(
            missing.starts_with(&format!("{shown}: key `stores`: no state store at ")),
            "{missing}"
        );
        assert!(missing.contains("sc"), "{missing}");
        // One store still needs one dump, and says how to give several.
        let e = refused("dumps = [\"a.gigagas\", \"b.gigagas\"]\nstate = \"sa\"");
        assert!(e.contains("key `state`") && e.contains("`stores`"), "{e}");
    }

    /// Dumps may carry labels (a dump file each, none given twice), which the plan keeps
    /// and records as written; the layout names each dimension once.
    #[test]
    fn dumps_take_labels_and_the_layout_names_dimensions_once() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.gigagas", "b.gigagas"] {
            std::fs::write(dir.path().join(name), b"").unwrap();
        }
        std::fs::create_dir(dir.path().join("suite")).unwrap();
        std::fs::write(dir.path().join("suite/c.gigagas"), b"").unwrap();
        let file = dir.path().join("c.toml");
        let config =
            |extra: &str| format!("threads = [1]\nbatch = [1]\nschedulers = [\"ols\"]\n{extra}\n");
        let load_text = |text: String| {
            std::fs::write(&file, text).unwrap();
            load(&file)
        };
        let sweep = load_text(config(
            "dumps = [{ path = \"a.gigagas\", label = \"30M\" }, \"b.gigagas\"]\n\
             [layout]\nrows = [\"dump\"]\ncolumns = [\"threads\", \"batch\"]",
        ))
        .unwrap();
        let labels: Vec<Option<&str>> = sweep
            .plan
            .dumps
            .iter()
            .map(|d| d.label.as_deref())
            .collect();
        assert_eq!(labels, [Some("30M"), None]);
        assert_eq!(sweep.plan.dumps[0].named, "a.gigagas");
        let recorded = sweep.plan.record();
        assert_eq!(
            recorded.dumps,
            [
                gigagas_grid::DumpEntry {
                    path: "a.gigagas".into(),
                    label: Some("30M".into())
                },
                gigagas_grid::DumpEntry::path("b.gigagas")
            ]
        );
        assert_eq!(recorded.layout.columns.len(), 2);
        let shown = file.display().to_string();
        let refused = |extra: &str| load_text(config(extra)).unwrap_err().to_string();
        assert_eq!(
            refused(
                "dumps = [{ path = \"a.gigagas\", label = \"x\" }, { path = \"b.gigagas\", label = \"x\" }]"
            ),
            format!(
                "{shown}: key `dumps`: label \"x\" is given to two dumps: each dump's label names it alone"
            )
        );
        assert_eq!(
            refused("dumps = [{ path = \"a.gigagas\", label = \" \" }]"),
            format!("{shown}: key `dumps`: label \" \": a label is a non-empty line of text")
        );
        assert_eq!(
            refused("dumps = [{ path = \"suite\", label = \"s\" }]"),
            format!(
                "{shown}: key `dumps`: suite: a label names one dump file, and this is a folder of dumps (resolved to {})",
                dir.path().join("suite").display()
            )
        );
        assert_eq!(
            refused("dumps = [\"a.gigagas\"]\n[layout]\nrows = [\"batch\"]\ncolumns = [\"batch\"]"),
            format!(
                "{shown}: key `layout`: dimension `batch` is named twice: a dimension makes rows or columns, once"
            )
        );
        let e = refused("dumps = [{ path = \"a.gigagas\", name = \"x\" }]");
        assert!(e.contains("unknown field `name`"), "{e}");
        let e = refused("dumps = [\"a.gigagas\"]\n[layout]\nrows = [\"thread\"]");
        assert!(e.contains("unknown variant `thread`"), "{e}");
    }

    #[test]
    fn missing_key_is_named() {
        let e = err("dumps = [\"a\"]\nthreads = [1]\nschedulers = [\"ols\"]\n");
        assert!(e.contains("missing field `batch`"), "{e}");
    }

    #[test]
    fn missing_dump_names_file_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("c.toml");
        std::fs::write(&file, GOOD).unwrap();
        let e = load(&file).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!(
                "{}: key `dumps`: ../dumps/mainnet-like.gigagas: no such file",
                file.display()
            )),
            "{e}"
        );
    }
}
