//! Archive members named by their archive path: the inputs were extracted to a private
//! temporary directory, and every path of the answer is mapped back to `archive!member`.

use crate::discover::archive::Prepared;
use crate::results::ScanReport;
use crate::verify::VerifyReport;

/// Map every path of a scan report back to the archives.
pub(super) fn fix_report(inputs: &Prepared, r: &mut ScanReport) {
    if !inputs.has_archives() {
        return;
    }
    r.inputs.iter_mut().for_each(|s| inputs.fix(s));
    for p in &mut r.partitions {
        inputs.fix(&mut p.path);
        if let Some(d) = &mut p.carried.log_dir {
            let mut fixed = d.to_path_buf();
            inputs.fix_path(&mut fixed);
            *d = std::sync::Arc::from(fixed);
        }
        inputs.fix_source(&mut p.source);
    }
    r.findings.iter_mut().for_each(|f| inputs.fix_finding(f));
    for (p, e) in &mut r.errors {
        inputs.fix_path(p);
        inputs.fix(e);
    }
}

/// Map every path of a verify report back to the archives.
pub(super) fn fix_verify(inputs: &Prepared, r: &mut VerifyReport) {
    if !inputs.has_archives() {
        return;
    }
    r.inputs.iter_mut().for_each(|s| inputs.fix(s));
    r.notes.iter_mut().for_each(|s| inputs.fix(s));
    for p in &mut r.partitions {
        // The partition's path and log dir are its source's.
        inputs.fix_source(&mut p.source);
        p.findings.iter_mut().for_each(|f| inputs.fix_finding(f));
    }
    r.log_dir_findings
        .iter_mut()
        .for_each(|f| inputs.fix_finding(f));
    for b in &mut r.broker_startup {
        b.log_dirs.iter_mut().for_each(|s| inputs.fix(s));
        inputs.fix(&mut b.message);
    }
    for (p, e) in &mut r.errors {
        inputs.fix_path(p);
        inputs.fix(e);
    }
}
