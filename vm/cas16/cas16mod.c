// SPDX-License-Identifier: GPL-2.0
/*
 * Guest participant of the 16-byte CAS check (cas16.h): insmod with
 * phys= (start of the shared nvdimm), iters=, min_retries=, parties=; the result is
 * one "cas16: RESULT" line in the kernel log.  Test code, never shipped.
 */
#include <linux/module.h>
#include <linux/io.h>
#include "cas16.h"

static unsigned long phys;
static unsigned long iters = 100000;
static unsigned long min_retries;
static int parties = 3;
module_param(phys, ulong, 0444);
module_param(iters, ulong, 0444);
module_param(min_retries, ulong, 0444);
module_param(parties, int, 0444);

static int __init cas16_init(void)
{
	struct cas16_stats st = { 0 };
	u64 *w;
	int err;

	if (!phys)
		return -EINVAL;
	w = memremap(phys, 4096, MEMREMAP_WB);
	if (!w)
		return -ENOMEM;
	err = cas16_hammer(w, iters, min_retries, parties, &st);
	pr_info("cas16: RESULT err=%d lo=%llu hi=%llu done=%llu retries=%llu torn=%llu bad_pairs=%llu\n",
		err, st.lo, st.hi, st.done, st.retries, st.torn, st.bad_pairs);
	memunmap(w);
	return 0;
}

static void __exit cas16_exit(void)
{
}

module_init(cas16_init);
module_exit(cas16_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("DaxFS test: 16-byte CAS across QEMU guests");
