/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* fsck from the C unit tests: daxfs_check() on a region, opened afresh. */
#ifndef DAXFS_TCHECK_H
#define DAXFS_TCHECK_H

#include "tutil.h"
#include "core/check.h"

/* Checks (repair: -y -f) region r of size bytes; report may be NULL.
 * Returns daxfs_check()'s result, or fs_open's error. */
static inline int t_fsck(void *r, uint64_t size, bool repair,
			 daxfs_check_report_t report, void *ctx,
			 struct daxfs_check_result *res)
{
	struct daxfs_check_opts o;
	struct daxfs_fs cf;
	void *scratch;
	uint64_t n;
	int err;

	err = daxfs_fs_open(&cf, r, size, 0);
	if (err)
		return err;
	t_obs_attach(&cf);
	n = daxfs_check_scratch_size(&cf);
	scratch = malloc(n ? n : 8);
	memset(&o, 0, sizeof(o));
	o.flags = repair ? DAXFS_CHECK_REPAIR | DAXFS_CHECK_FORCE : 0;
	o.scratch = scratch;
	o.scratch_size = n;
	o.report = report;
	o.ctx = ctx;
	err = daxfs_check(&cf, &o, res);
	free(scratch);
	t_obs_detach(&cf);
	return err;
}

#endif /* DAXFS_TCHECK_H */
