# Applied by vm/xfstests.py to the external tree's common/attr: xfstests knows no maximum
# ACL count for daxfs (_acl_get_max's default 0 makes generic/026 "not run").  A daxfs
# xattr value holds at most DAXFS_XATTR_SIZE_MAX = 65536 bytes, and an access ACL is
# 4 + 8 bytes per entry, so 8191 entries fit (the VFS refuses 65540 bytes with E2BIG).
/^_acl_get_max()/,/^}/ {
	s/^\tbcachefs)$/\tdaxfs)\n\t\techo 8191\n\t\t;;\n&/
}
