//! Records the git commit the binary was built from and how it was built (profile, LTO,
//! codegen units, target CPU, features), for the provenance of results.

fn main() {
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let dirty = std::process::Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .ok()
        .is_some_and(|o| !o.stdout.is_empty());
    println!(
        "cargo:rustc-env=GIGAGAS_COMMIT={commit}{}",
        if dirty { "-dirty" } else { "" }
    );
    build_profile();
    println!("cargo:rerun-if-changed=../../.git/HEAD");
    println!("cargo:rerun-if-changed=../../.git/index");
}

/// The build's profile settings as `GIGAGAS_BUILD_*` variables: the profile and opt-level
/// cargo gives build scripts; LTO and codegen units from the workspace's `[profile.*]`
/// table, overridden by `CARGO_PROFILE_<NAME>_LTO` / `_CODEGEN_UNITS` where set; the
/// target CPU from the rustflags.
fn build_profile() {
    let env = |k: &str| std::env::var(k).ok();
    let profile = env("PROFILE").unwrap_or_else(|| "unknown".into());
    // PROFILE is `release` or `debug`; the profile table of `debug` is `dev`.
    let table = if profile == "debug" {
        "dev"
    } else {
        profile.as_str()
    };
    let manifest = std::fs::read_to_string("../../Cargo.toml").unwrap_or_default();
    let setting = |key: &str| -> Option<String> {
        let header = format!("[profile.{table}]");
        let start = manifest.find(&header)? + header.len();
        let body = &manifest[start..];
        let body = &body[..body.find("\n[").unwrap_or(body.len())];
        body.lines().find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == key).then(|| v.trim().trim_matches('"').to_string())
        })
    };
    let upper = table.to_uppercase();
    let lto = env(&format!("CARGO_PROFILE_{upper}_LTO"))
        .or_else(|| setting("lto"))
        .unwrap_or_else(|| "false (default)".into());
    let units = env(&format!("CARGO_PROFILE_{upper}_CODEGEN_UNITS"))
        .or_else(|| setting("codegen-units"))
        .unwrap_or_else(|| "default".into());
    let flags = env("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let target_cpu = flags
        .split('\x1f')
        .flat_map(|f| f.split_whitespace())
        .find_map(|f| f.strip_prefix("target-cpu=").map(str::to_string))
        .unwrap_or_else(|| {
            format!(
                "{} baseline",
                env("CARGO_CFG_TARGET_ARCH").unwrap_or_default()
            )
        });
    let features: Vec<String> = std::env::vars()
        .filter_map(|(k, _)| k.strip_prefix("CARGO_FEATURE_").map(|f| f.to_lowercase()))
        .collect();
    println!("cargo:rustc-env=GIGAGAS_BUILD_PROFILE={profile}");
    println!(
        "cargo:rustc-env=GIGAGAS_BUILD_OPT_LEVEL={}",
        env("OPT_LEVEL").unwrap_or_default()
    );
    println!("cargo:rustc-env=GIGAGAS_BUILD_LTO={lto}");
    println!("cargo:rustc-env=GIGAGAS_BUILD_CODEGEN_UNITS={units}");
    println!("cargo:rustc-env=GIGAGAS_BUILD_TARGET_CPU={target_cpu}");
    println!(
        "cargo:rustc-env=GIGAGAS_BUILD_FEATURES={}",
        features.join(",")
    );
    println!("cargo:rerun-if-changed=../../Cargo.toml");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
}
