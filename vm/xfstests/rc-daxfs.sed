# Applied by vm/xfstests.py to the external tree's common/rc: xfstests has no daxfs case in
# _try_scratch_mkfs_sized (its default is _notrun).  mkfs.daxfs takes the mke2fs calling
# convention (-F, -b BLOCKSIZE, BLOCKS in those units; docs/tools.md).
/^_try_scratch_mkfs_sized()/,/^}/ {
/_check_minimal_fs_size \$fssize/,/^}/ {
	s/^\tbcachefs)$/\tdaxfs)\n\t\t${MKFS_PROG} -t $FSTYP -F $MKFS_OPTIONS -b $blocksize "$@" $SCRATCH_DEV $blocks\n\t\t;;\n&/
}
}
# _filesystem_timestamp_range: daxfs keeps s64 nanoseconds; daxfs.ko sets s_time_min/max to the
# whole seconds of that range (kernel/super.c), and these are those numbers.
/^_filesystem_timestamp_range()/,/^}/ {
	s/^\tbtrfs)$/\tdaxfs)\n\t\techo "-9223372035 9223372035"\n\t\t;;\n&/
}
