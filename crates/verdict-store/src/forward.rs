//! `forward_store!`: the one place that lists every `Store` method for a
//! store that hands them to another store (`Database` to its backend, the
//! engine's fenced store to the shared store). A new `Store` method is
//! added here once, not in each wrapper. Must not hold SQL or logic: every
//! method it writes calls the same method on the store it forwards to.

/// Paths the expansion of [`forward_store!`](crate::forward_store) names,
/// so a crate using it needs no more dependencies than verdict-store.
#[doc(hidden)]
pub mod paths {
    pub use serde_json::Value;
    pub use std::collections::BTreeMap;
    pub use verdict_model::{
        AdaptiveRecord, Cell, ComparisonStatus, Environment, RunId, RunStatus, Sample,
        SampleDetails,
    };
}

/// Inside `impl Store for Wrapper { ... }`: every `Store` method, each
/// calling the same method on `self.$via()` (a method of the wrapper that
/// returns the store to forward to). `forward_store!(via; except
/// append_sample)` leaves `append_sample` and `append_sample_details` (the
/// two writes of a sample) to the wrapper, which writes them itself (the
/// fenced store).
#[macro_export]
macro_rules! forward_store {
    ($via:ident) => {
        $crate::forward_store!($via; except append_sample);
        fn append_sample(
            &self,
            run: $crate::forward::paths::RunId,
            sample: &$crate::forward::paths::Sample,
            cell: &$crate::forward::paths::Cell,
        ) -> Result<(), $crate::StoreError> {
            self.$via().append_sample(run, sample, cell)
        }
        fn append_sample_details(
            &self,
            run: $crate::forward::paths::RunId,
            sample: &$crate::forward::paths::Sample,
            cell: &$crate::forward::paths::Cell,
            details: &$crate::forward::paths::SampleDetails,
        ) -> Result<(), $crate::StoreError> {
            self.$via().append_sample_details(run, sample, cell, details)
        }
    };
    ($via:ident; except append_sample) => {
        fn create_run(
            &self,
            run: &$crate::NewRun,
        ) -> Result<$crate::forward::paths::RunId, $crate::StoreError> {
            self.$via().create_run(run)
        }
        fn finish_run(
            &self,
            run: $crate::forward::paths::RunId,
            status: $crate::forward::paths::RunStatus,
            finished_at_ms: i64,
            environment_end: Option<&$crate::forward::paths::Environment>,
        ) -> Result<(), $crate::StoreError> {
            self.$via()
                .finish_run(run, status, finished_at_ms, environment_end)
        }
        fn set_status(
            &self,
            run: $crate::forward::paths::RunId,
            status: $crate::forward::paths::RunStatus,
        ) -> Result<(), $crate::StoreError> {
            self.$via().set_status(run, status)
        }
        fn set_planned(
            &self,
            run: $crate::forward::paths::RunId,
            planned: u64,
        ) -> Result<(), $crate::StoreError> {
            self.$via().set_planned(run, planned)
        }
        fn list_runs(&self) -> Result<Vec<$crate::RunSummary>, $crate::StoreError> {
            self.$via().list_runs()
        }
        fn run(
            &self,
            run: $crate::forward::paths::RunId,
        ) -> Result<$crate::RunRecord, $crate::StoreError> {
            self.$via().run(run)
        }
        fn latest_run(&self) -> Result<Option<$crate::RunRecord>, $crate::StoreError> {
            self.$via().latest_run()
        }
        fn samples(
            &self,
            run: $crate::forward::paths::RunId,
        ) -> Result<Vec<$crate::forward::paths::Sample>, $crate::StoreError> {
            self.$via().samples(run)
        }
        fn append_details(
            &self,
            run: $crate::forward::paths::RunId,
            sequence: u32,
            details: &$crate::forward::paths::SampleDetails,
        ) -> Result<(), $crate::StoreError> {
            self.$via().append_details(run, sequence, details)
        }
        fn sample_details(
            &self,
            run: $crate::forward::paths::RunId,
        ) -> Result<
            $crate::forward::paths::BTreeMap<u32, $crate::forward::paths::SampleDetails>,
            $crate::StoreError,
        > {
            self.$via().sample_details(run)
        }
        fn detail_counts(
            &self,
            run: $crate::forward::paths::RunId,
        ) -> Result<$crate::DetailCounts, $crate::StoreError> {
            self.$via().detail_counts(run)
        }
        fn select_samples(
            &self,
            selection: &$crate::Selection,
        ) -> Result<Vec<$crate::SelectedValue>, $crate::StoreError> {
            self.$via().select_samples(selection)
        }
        fn cells(
            &self,
            run: $crate::forward::paths::RunId,
        ) -> Result<Vec<(usize, $crate::forward::paths::Cell)>, $crate::StoreError> {
            self.$via().cells(run)
        }
        fn run_times(&self) -> Result<Vec<$crate::RunTimes>, $crate::StoreError> {
            self.$via().run_times()
        }
        fn iteration_spans(
            &self,
            run: $crate::forward::paths::RunId,
        ) -> Result<Vec<(i64, i64)>, $crate::StoreError> {
            self.$via().iteration_spans(run)
        }
        fn create_boot(
            &self,
            run: $crate::forward::paths::RunId,
            boot: &$crate::NewBoot,
        ) -> Result<u32, $crate::StoreError> {
            self.$via().create_boot(run, boot)
        }
        fn update_boot(
            &self,
            run: $crate::forward::paths::RunId,
            row: &$crate::BootRow,
        ) -> Result<(), $crate::StoreError> {
            self.$via().update_boot(run, row)
        }
        fn boots(
            &self,
            run: $crate::forward::paths::RunId,
        ) -> Result<Vec<$crate::BootRow>, $crate::StoreError> {
            self.$via().boots(run)
        }
        fn record_adaptive_procedure(
            &self,
            run: $crate::forward::paths::RunId,
            procedure: &str,
        ) -> Result<(), $crate::StoreError> {
            self.$via().record_adaptive_procedure(run, procedure)
        }
        fn record_adaptive_decisions(
            &self,
            run: $crate::forward::paths::RunId,
            decisions: &[$crate::forward::paths::ComparisonStatus],
        ) -> Result<(), $crate::StoreError> {
            self.$via().record_adaptive_decisions(run, decisions)
        }
        fn adaptive(
            &self,
            run: $crate::forward::paths::RunId,
        ) -> Result<$crate::forward::paths::AdaptiveRecord, $crate::StoreError> {
            self.$via().adaptive(run)
        }
        fn put_annotation(
            &self,
            run: $crate::forward::paths::RunId,
            key: &str,
            value: &$crate::forward::paths::Value,
        ) -> Result<(), $crate::StoreError> {
            self.$via().put_annotation(run, key, value)
        }
        fn annotations(
            &self,
            run: $crate::forward::paths::RunId,
        ) -> Result<
            $crate::forward::paths::BTreeMap<String, $crate::forward::paths::Value>,
            $crate::StoreError,
        > {
            self.$via().annotations(run)
        }
        fn put_kernel_config(
            &self,
            sha256: &str,
            source: &str,
            text: &str,
        ) -> Result<(), $crate::StoreError> {
            self.$via().put_kernel_config(sha256, source, text)
        }
        fn kernel_config(
            &self,
            sha256: &str,
        ) -> Result<Option<(String, String)>, $crate::StoreError> {
            self.$via().kernel_config(sha256)
        }
        fn create_bisect(
            &self,
            bisect: &$crate::NewBisect,
        ) -> Result<$crate::BisectId, $crate::StoreError> {
            self.$via().create_bisect(bisect)
        }
        fn append_bisect_event(
            &self,
            bisect: $crate::BisectId,
            sequence: u32,
            event: &$crate::forward::paths::Value,
        ) -> Result<(), $crate::StoreError> {
            self.$via().append_bisect_event(bisect, sequence, event)
        }
        fn bisect_runs(
            &self,
            bisect: $crate::BisectId,
        ) -> Result<Vec<$crate::RunSummary>, $crate::StoreError> {
            self.$via().bisect_runs(bisect)
        }
        fn bisect_events(
            &self,
            bisect: $crate::BisectId,
        ) -> Result<Vec<(u32, $crate::forward::paths::Value)>, $crate::StoreError> {
            self.$via().bisect_events(bisect)
        }
        fn finish_bisect(
            &self,
            bisect: $crate::BisectId,
            status: $crate::forward::paths::RunStatus,
            finished_at_ms: i64,
            result: &$crate::forward::paths::Value,
        ) -> Result<(), $crate::StoreError> {
            self.$via()
                .finish_bisect(bisect, status, finished_at_ms, result)
        }
        fn list_bisects(&self) -> Result<Vec<$crate::BisectSummary>, $crate::StoreError> {
            self.$via().list_bisects()
        }
        fn bisect(
            &self,
            bisect: $crate::BisectId,
        ) -> Result<$crate::BisectRecord, $crate::StoreError> {
            self.$via().bisect(bisect)
        }
        fn latest_bisect(&self) -> Result<Option<$crate::BisectRecord>, $crate::StoreError> {
            self.$via().latest_bisect()
        }
    };
}
