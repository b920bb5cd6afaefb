# Applied by vm/xfstests.py to the external tree's common/rc: xfstests has no daxfs case in
# _try_scratch_mkfs_sized (its default is _notrun).  mkfs.daxfs takes the mke2fs calling
# convention (-F, -b BLOCKSIZE, BLOCKS in those units; docs/tools.md).
/^_try_scratch_mkfs_sized()/,/^}/ {
/_check_minimal_fs_size \$fssize/,/^}/ {
	s/^\tbcachefs)$/\tdaxfs)\n\t\t${MKFS_PROG} -t $FSTYP -F $MKFS_OPTIONS -b $blocksize "$@" $SCRATCH_DEV $blocks\n\t\t;;\n&/
}
}
