//! The subcommands other than `scan`, `producers` and `txns` statistics (their arms of
//! `run` grew past a readable size).

use super::*;

/// The error of a `--format` only `scan` writes (`what`: which formats this command
/// prints instead).
pub(crate) fn not_for_this_command(format: OutFormat, what: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "--format {} is for `klogscan scan`; {what}",
        format
            .to_possible_value()
            .map_or("?".into(), |v| v.get_name().to_string())
    )
}

/// `txns --cluster`: one row per cluster transaction passing the filters.
pub(crate) fn cmd_txns_cluster(
    a: TxnsArgs,
    style: &Style,
    mut out: &mut dyn Write,
) -> Result<ExitCode> {
    // The cluster view filters transactions itself, with every value of the
    // repeatable filters; finding filters have no transaction to act on.
    for (given, flag) in [
        (a.scan.since.is_some(), "--since"),
        (a.scan.until.is_some(), "--until"),
        (a.scan.offsets.is_some(), "--offsets"),
        (a.scan.min_severity.is_some(), "--min-severity"),
    ] {
        if given {
            anyhow::bail!(
                "{flag} selects findings; txns --cluster lists transactions: use --from/--to, --topic, --partition, --producer-id, --transactional-id"
            );
        }
    }
    let filter = klogscan::report::filter::TxnFilter {
        transactional_ids: a.scan.transactional_id.clone(),
        producer_ids: a.scan.producer_id.clone(),
        topics: a.scan.topic.clone(),
        partition: a.scan.partition,
        from_ms: a.from,
        to_ms: a.to,
    };
    let opts = scan_options(&a.scan)?.with_keep_cluster_txns(true);
    let answer = request::run(&Request::new(a.scan.paths.clone()).with_options(opts))?;
    print_warnings(&answer.warnings);
    let report = answer.report;
    match a.scan.format {
        OutFormat::Json => json::write_cluster_txns(
            &report,
            &filter,
            &mut klogscan::escape::JsonWriter::new(&mut out),
        )?,
        OutFormat::Table => {
            table::write_cluster_txns_with(&report, &filter, style, &mut text_out(&mut out, style))?
        }
        other => return Err(not_for_this_command(other, "txns prints table or json")),
    }
    out.flush()?;
    Ok(input_failures(
        &report.errors,
        exit_code(report.nothing_read(), report.max_severity(), a.scan.fail_on),
    ))
}

/// Discover `paths` with the `--cluster-id`s given (refused when unusable: exit 2).
fn discover_given(
    paths: &[PathBuf],
    given: &[klogscan::results::GivenClusterId],
) -> Result<klogscan::discover::layout::Inventory> {
    let mut opts = ScanOptions::default();
    opts.cluster_ids = given.to_vec();
    Ok(request::discover(paths, &opts)?)
}

/// What discovery could not read (`Inventory::errors`) inside the partition directories of
/// `topic`, and among the log dirs' own files named in `log_dir_files`: the files a
/// command reading only that topic would have read.
fn errors_in(
    inv: &klogscan::discover::layout::Inventory,
    topic: &str,
    log_dir_files: &[&str],
) -> Vec<(PathBuf, String)> {
    let dirs: Vec<&std::path::Path> = inv
        .partitions
        .iter()
        .filter(|p| p.tp.as_ref().is_some_and(|tp| tp.topic == topic))
        .map(|p| p.path.as_path())
        .collect();
    let log_dir_file = |path: &std::path::Path| {
        path.file_name()
            .is_some_and(|n| log_dir_files.iter().any(|f| n == *f))
            && inv
                .log_dirs
                .iter()
                .any(|ld| path.parent() == Some(ld.path.as_path()))
    };
    inv.errors
        .iter()
        .filter(|(path, _)| dirs.iter().any(|d| path.starts_with(d)) || log_dir_file(path))
        .cloned()
        .collect()
}

/// `groups`: the groups rebuilt from `__consumer_offsets`.
pub(crate) fn cmd_groups(
    a: GroupsArgs,
    style: &Style,
    mut out: &mut dyn Write,
) -> Result<ExitCode> {
    use klogscan::partition::groups::{self, GroupType, GroupsOptions, render};
    let group_type = match a.group_type.as_deref().map(GroupType::parse) {
        Some(None) => anyhow::bail!("--type: expected classic, consumer, share or streams"),
        Some(t) => t,
        None => None,
    };
    let inv = discover_given(&a.paths, &a.ids.cluster_id)?;
    if !inv.partitions.iter().any(|p| {
        p.tp.as_ref()
            .is_some_and(|tp| tp.topic == "__consumer_offsets")
    }) {
        eprintln!("klogscan: no __consumer_offsets partition found");
        return Ok(ExitCode::from(2));
    }
    let opts = GroupsOptions {
        group: a.group.clone(),
        group_type,
        include_deleted: a.deleted,
        ..Default::default()
    };
    let (list, unread) = groups::list_groups_read(&inv, &opts);
    // What discovery could not read in the partitions the replay reads (a FIFO named like
    // a segment is not one of their segments), then the records the replay did not get.
    let mut unread = unread;
    // Each log dir's `meta.properties` gives the groups' cluster.
    unread.splice(
        0..0,
        errors_in(&inv, "__consumer_offsets", &["meta.properties"]),
    );
    match a.format {
        OutFormat::Json => {
            render::write_json(&list, &mut klogscan::escape::JsonWriter::new(&mut out))?
        }
        OutFormat::Table if a.members => klogscan::report::table::write_group_members_with(
            &list,
            style,
            &mut text_out(&mut out, style),
        )?,
        OutFormat::Table => klogscan::report::table::write_groups_with(
            &list,
            style,
            &mut text_out(&mut out, style),
        )?,
        other => return Err(not_for_this_command(other, "groups prints table or json")),
    }
    out.flush()?;
    // Records the replay did not get (never silent): on stderr, exit 2.
    Ok(input_failures(&unread, ExitCode::SUCCESS))
}

/// `consumers`: every group's committed offsets held against their partitions (a whole
/// scan: the partitions' ends, LSOs and hanging transactions are the scan's), then the
/// consumer findings.
pub(crate) fn cmd_consumers(
    a: ConsumersArgs,
    style: &Style,
    mut out: &mut dyn Write,
) -> Result<ExitCode> {
    use klogscan::cluster::consumers::ConsumersOptions;
    use klogscan::report::consumers as render;
    let inputs = klogscan::discover::archive::prepare(&a.paths, &Default::default())?;
    for w in &inputs.warnings {
        eprintln!("klogscan: {}", klogscan::escape::text(w));
    }
    let inv = discover_given(&inputs.paths, &a.ids.cluster_id)?;
    if !inv.partitions.iter().any(|p| {
        p.tp.as_ref()
            .is_some_and(|tp| tp.topic == "__consumer_offsets")
    }) {
        eprintln!("klogscan: no __consumer_offsets partition found");
        return Ok(ExitCode::from(2));
    }
    let mut opts = ScanOptions::default()
        .with_threads(capped_threads(a.threads))
        .with_now_ms(a.now)
        .with_keep_producers(false)
        .with_keep_cluster_txns(false);
    opts.replay.hanging_after_ms = a.hanging_after;
    let keep = ConsumersOptions {
        group: a.group.clone(),
        topic: a.topic.clone(),
        partition: a.partition,
    };
    let (mut report, view) = klogscan::pipeline::analyse_consumers(&inv, &opts, &keep);
    report::client::fill(&mut report.findings);
    // Paths inside archives are named by the archive, as every report names them.
    for f in &mut report.findings {
        inputs.fix_finding(f);
    }
    let findings = render::consumer_findings(&report.findings, &keep);
    match a.format {
        OutFormat::Json => {
            let mut v = render::to_json(&view, &findings);
            inputs.fix_value(&mut v);
            render::write_value(&v, &mut out)?
        }
        OutFormat::Table => {
            render::write_table_with(&view, &findings, style, &mut text_out(&mut out, style))?
        }
        other => {
            return Err(not_for_this_command(
                other,
                "consumers prints table or json",
            ));
        }
    }
    out.flush()?;
    // Every lag and LSO is the whole scan's: what it could not read is said as `scan`
    // says it (each unreadable file of a partition, then the paths not read at all).
    let shown = |(p, why): &(PathBuf, String)| {
        let p = p.display().to_string();
        (PathBuf::from(inputs.display(&p)), why.clone())
    };
    let mut errors = inputs.failed.clone();
    errors.extend(report.errors.iter().map(shown));
    let incomplete = report_unreadable(report.findings.iter(), &errors);
    errors.extend(
        view.unread
            .iter()
            .map(|(p, why)| (PathBuf::from(inputs.display(p)), why.clone())),
    );
    let code = input_failures(&errors, ExitCode::SUCCESS);
    Ok(if incomplete { ExitCode::from(2) } else { code })
}

/// `verify`: the cross-checks and the restart prediction, filtered like `scan`.
pub(crate) fn cmd_verify(
    a: VerifyArgs,
    style: &Style,
    mut out: &mut dyn Write,
) -> Result<ExitCode> {
    use klogscan::verify::render;
    if a.scan.part.max_bytes.is_some() {
        // The cross-checks compare indexes, snapshots and checkpoints with the log
        // end: on a partial read they would report what was not read.
        eprintln!(
            "klogscan: verify needs whole segments: --max-bytes is not supported here (use scan --max-bytes)"
        );
        return Ok(ExitCode::from(2));
    }
    let broker_version = a.broker_version;
    let req = Request::new(a.scan.paths.clone())
        .with_options(scan_options(&a.scan)?)
        .with_filter(filter(&a.scan))
        .with_transactional_ids(a.scan.transactional_id.clone());
    let answer = request::verify(&req, broker_version)?;
    print_warnings(&answer.warnings);
    let report = answer.report;
    for n in &report.notes {
        eprintln!("klogscan: note: {}", klogscan::escape::text(n));
    }
    match a.scan.format {
        OutFormat::Json => {
            render::write_json(&report, &mut klogscan::escape::JsonWriter::new(&mut out))?
        }
        OutFormat::Table => {
            report::verify_text::write_verify(&report, style, &mut text_out(&mut out, style))?
        }
        other => return Err(not_for_this_command(other, "verify prints table or json")),
    }
    finish_output(
        report.nothing_read(),
        report.findings(),
        &report.errors,
        &mut out,
        a.scan.fail_on,
    )
}

/// `dump`: files (or files inside archives) as kafka-dump-log prints them.
pub(crate) fn cmd_dump(a: DumpArgs, mut out: &mut dyn Write) -> Result<ExitCode> {
    let format = match a.format {
        DumpOutFormat::Text => DumpFormat::Text,
        DumpOutFormat::Json => DumpFormat::Json,
    };
    let opts = DumpOptions {
        deep_iteration: a.deep_iteration
            || a.print_data_log
            || a.transaction_log_decoder
            || a.transaction_log_json
            || a.offsets_decoder
            || a.share_group_state_decoder
            || a.cluster_metadata_decoder
            || a.remote_log_metadata_decoder,
        print_data_log: a.print_data_log
            || a.transaction_log_decoder
            || a.transaction_log_json
            || a.offsets_decoder
            || a.share_group_state_decoder
            || a.cluster_metadata_decoder
            || a.remote_log_metadata_decoder,
        skip_record_metadata: a.skip_record_metadata,
        max_bytes: a.max_bytes,
        format,
        max_decompressed: Some(a.max_decompressed),
        transaction_log_decoder: a.transaction_log_decoder || a.transaction_log_json,
        transaction_log_json: a.transaction_log_json,
        offsets_decoder: a.offsets_decoder,
        share_group_state_decoder: a.share_group_state_decoder,
        cluster_metadata_decoder: a.cluster_metadata_decoder,
        legacy_decoder_text: a.legacy_decoder_text,
        index_sanity_check: a.index_sanity_check,
        verify_index_only: a.verify_index_only,
        piece_bytes: None,
        mmap: a.mmap.mode(),
        piece_text_cap: None,
        remote_log_metadata_decoder: a.remote_log_metadata_decoder,
    };
    let stderr = io::stderr();
    // Buffered: a crafted file can make millions of stderr lines.
    let mut err = BufWriter::new(stderr.lock());
    // The output locks cannot move to a pool thread: the global pool is sized by
    // `--threads` (started in `main`).
    // JSON Lines: C1 controls and DEL as \u escapes too (`escape::JsonWriter`).
    let mut json_out;
    let mut json_err;
    let (o, e): (&mut dyn Write, &mut dyn Write) = if format == DumpFormat::Json {
        json_out = klogscan::escape::JsonWriter::new(&mut out);
        json_err = klogscan::escape::JsonWriter::new(&mut err);
        (&mut json_out, &mut json_err)
    } else {
        (&mut out, &mut err)
    };
    // Archives (`x.tgz`, `x.tgz!/dir/file`): the files asked for are extracted and
    // named by their place in the archive.
    let inputs =
        dump::archive_inputs::prepare(&a.paths, &klogscan::discover::archive::Limits::default())?;
    for w in &inputs.prepared.warnings {
        eprintln!("klogscan: {}", klogscan::escape::text(w));
    }
    let failed = inputs.refused.iter().chain(&inputs.prepared.failed);
    let mut input_failed = false;
    for (p, why) in failed {
        eprintln!(
            "klogscan: {}: {}",
            klogscan::escape::path(p),
            klogscan::escape::text(why)
        );
        input_failed = true;
    }
    let json = format == DumpFormat::Json;
    let mut rw_out;
    let mut rw_err;
    let (o, e): (&mut dyn Write, &mut dyn Write) = if inputs.prepared.has_archives() {
        rw_out = dump::archive_inputs::Rewrite::new(o, &inputs.prepared, json);
        rw_err = dump::archive_inputs::Rewrite::new(e, &inputs.prepared, json);
        (&mut rw_out, &mut rw_err)
    } else {
        (o, e)
    };
    let status = dump::dump_paths(&inputs.paths, &opts, o, e)?;
    o.flush()?;
    e.flush()?;
    out.flush()?;
    err.flush()?;
    Ok(
        if status.files == 0 || status.unreadable_files > 0 || input_failed {
            ExitCode::from(2)
        } else if status.has_problems() {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        },
    )
}

/// `history`: the leadership history of each cluster's KRaft metadata log.
pub(crate) fn cmd_history(a: HistoryArgs, mut out: &mut dyn Write) -> Result<ExitCode> {
    use klogscan::cluster::leadership::{self, view::HistoryFilter};
    use klogscan::report::history;
    let inv = klogscan::discover::layout::discover(&a.paths);
    let filter = HistoryFilter {
        topic: a.topic.clone(),
        partition: a.partition,
        from_ms: a.since,
        to_ms: a.until,
    };
    let (views, unread) = leadership::views_read(&inv, &filter);
    if views.is_empty() {
        eprintln!("klogscan: no __cluster_metadata partition found");
        return Ok(ExitCode::from(2));
    }
    match a.format {
        OutFormat::Json => history::write_json(&views, &mut out)?,
        OutFormat::Table => history::write_table(&views, &mut out)?,
        other => anyhow::bail!(
            "--format {} is for `klogscan scan`; history prints table or json",
            other
                .to_possible_value()
                .map_or("?".into(), |v| v.get_name().to_string())
        ),
    }
    out.flush()?;
    // The given paths that are not Kafka data, then what discovery could not read in the
    // metadata partitions the history replays (a FIFO named like a segment or
    // `quorum-state` is not one of their files) and among the log dir files it reads
    // (`meta.properties`: the clusters; `bootstrap.checkpoint`).
    let mut failed = inv.input_errors.clone();
    failed.extend(
        errors_in(
            &inv,
            "__cluster_metadata",
            &["meta.properties", "bootstrap.checkpoint"],
        )
        .into_iter()
        .filter(|e| !inv.input_errors.contains(e)),
    );
    // Then the files the replay could not read (no permission, changed during the read).
    failed.extend(unread);
    Ok(input_failures(&failed, ExitCode::SUCCESS))
}

/// `collect`: the bundle to `--out` (`crate::collect_out`: a regular file is written as
/// `<out>.partial` and renamed once complete; a pipe, a device or `-` is streamed); a
/// summary on stderr. Exit 2 when a path could not be read or no partition was found (as
/// `scan`), or when `--out` is a directory or inside an input (refused before the scan).
pub(crate) fn cmd_collect(a: CollectArgs) -> Result<ExitCode> {
    let opts = partition_options(&a.part, &a.remote_storage);
    request::check_given_ids(&a.paths, &opts)?;
    let dest = crate::collect_out::Dest::of(&a.out, &a.paths)?;
    let metadata = &a.remote_log_metadata;
    // Nothing of the inputs was readable: a bundle of no partition would merge as a
    // broker without data, so no file is left behind.
    let nothing_read = |s: &klogscan::bundle::CollectSummary| {
        s.partitions == 0 && s.log_dirs == 0 && !s.errors.is_empty()
    };
    let summary = dest.write(
        |w| klogscan::bundle::collect_with(&a.paths, metadata, &opts, w),
        |s| !nothing_read(s),
    )?;
    // What could not be read first (each unreadable file of a partition, then the paths
    // not read at all), then what was written (the order a scan says them in).
    for m in &summary.unread_files {
        eprintln!("klogscan: {}", klogscan::escape::text(m));
    }
    let code = input_failures(&summary.errors, ExitCode::SUCCESS);
    let code = if summary.unread_files.is_empty() {
        code
    } else {
        ExitCode::from(2)
    };
    if nothing_read(&summary) {
        eprintln!(
            "klogscan: no bundle written to {}: no log dir or partition was read under the given paths",
            dest.shown()
        );
        return Ok(ExitCode::from(2));
    }
    eprintln!(
        "klogscan: {}: {} log dir(s), {} partition(s), {} batches, {} bytes of log read; bundle {} bytes",
        dest.shown(),
        summary.log_dirs,
        summary.partitions,
        summary.batches,
        summary.bytes,
        summary.bundle_bytes
    );
    if summary.partitions == 0 {
        eprintln!("klogscan: no partition found under the given paths");
        return Ok(ExitCode::from(2));
    }
    Ok(code)
}

/// `merge` takes bundles made with per-partition options: giving them again here would
/// change nothing, so it is refused rather than silently ignored.
pub(crate) fn merge_refusals(a: &ScanArgs) -> Result<()> {
    let given = [
        (a.part.no_crc, "--no-crc"),
        (a.part.deep, "--deep"),
        (a.part.now.is_some(), "--now"),
        (a.part.max_bytes.is_some(), "--max-bytes"),
        (!a.part.compacted.is_empty(), "--compacted"),
        (a.part.follow, "--follow"),
    ];
    if let Some((_, flag)) = given.iter().find(|(on, _)| *on) {
        anyhow::bail!(
            "{flag} is not a merge option: per-partition options are given to `klogscan collect` (the bundles record them)"
        );
    }
    Ok(())
}

/// `--timeline` draws in the HTML report, which only `scan` and `merge` print.
pub(crate) fn timeline_refusal(a: &ScanArgs) -> Result<()> {
    if !a.timeline.is_empty() && a.format != OutFormat::Html {
        anyhow::bail!(
            "--timeline draws timelines in the HTML report: use it with `scan --format html` (or `merge --format html`)"
        );
    }
    Ok(())
}
