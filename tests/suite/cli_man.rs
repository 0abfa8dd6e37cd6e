//! `klogscan man` is one complete page (every command, every flag, the exit status; no
//! reference to a page that is not installed), and each command's `--format` offers only
//! the formats it prints.

use assert_cmd::Command;

fn out(args: &[&str]) -> (i32, String) {
    let o = Command::cargo_bin("klogscan")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code().unwrap(),
        String::from_utf8(o.stdout).unwrap() + &String::from_utf8(o.stderr).unwrap(),
    )
}

const COMMANDS: [&str; 7] = [
    "scan",
    "producers",
    "txns",
    "dump",
    "groups",
    "verify",
    "completions",
];

/// The long flags a command's `--help` lists.
fn flags(help: &str) -> Vec<String> {
    help.lines()
        .filter_map(|l| {
            let t = l.trim_start();
            let t = t.strip_prefix("-h, ").unwrap_or(t);
            let t = t.split_once(", ").map_or(t, |(_, rest)| rest);
            t.strip_prefix("--")
                .map(|r| r.split([' ', '=', '<']).next().unwrap_or("").to_string())
        })
        .filter(|f| !f.is_empty())
        .collect()
}

#[test]
fn the_man_page_documents_every_command_flag_and_exit_code() {
    let (code, man) = out(&["man"]);
    assert_eq!(code, 0);
    assert!(
        !man.contains("klogscan-scan(1)") && !man.contains("klogscan\\-scan(1)"),
        "no page that does not exist"
    );
    assert!(man.contains(".SH \"EXIT STATUS\""));
    for c in ["\\fB0\\fR", "\\fB1\\fR", "\\fB2\\fR"] {
        assert!(man.contains(c), "{c}");
    }
    for cmd in COMMANDS {
        assert!(
            man.contains(&format!(".SH \"KLOGSCAN {}\"", cmd.to_uppercase())),
            "{cmd}"
        );
        let (_, help) = out(&[cmd, "--help"]);
        let fs = flags(&help);
        assert!(!fs.is_empty() || cmd == "completions", "{cmd}: {help}");
        for f in fs {
            let roff = format!("\\fB\\-\\-{}\\fR", f.replace('-', "\\-"));
            assert!(man.contains(&roff), "{cmd} --{f} missing from the man page");
        }
    }
}

#[test]
fn each_command_offers_only_its_own_formats() {
    for cmd in ["producers", "txns", "verify", "groups"] {
        let (_, help) = out(&[cmd, "--help"]);
        for other in ["jsonl", "find-hanging", "html"] {
            assert!(
                !help.contains(&format!("- {other}:")),
                "{cmd} --help offers {other}"
            );
        }
        assert!(help.contains("- json:"), "{cmd}: {help}");
        let (code, err) = out(&[cmd, "--format", "html", "."]);
        assert_eq!(code, 2, "{cmd}");
        assert!(err.contains("possible values: table, json"), "{cmd}: {err}");
    }
    let (_, help) = out(&["scan", "--help"]);
    for f in ["table", "json", "jsonl", "find-hanging", "html"] {
        assert!(help.contains(&format!("- {f}:")), "scan offers {f}");
    }
}
