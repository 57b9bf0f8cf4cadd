# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034
# Shared by mkman.sh and check.sh. Sourced, not executed.
#
# The kernel's kernel-doc is not in the headers package, so it is taken
# from the linux-source tarball of the sid root (or of the system we run
# on) and kept in the cache, next to the root, never in the repository.

IBCM_MAN_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/testing/vm/config.sh
. "$IBCM_MAN_DIR/../vm/config.sh"

# The 16 exported functions and the handler type, in the order a user
# meets them. Each gets a page; their SEE ALSO sections name each other.
IBCM_API_PAGES="ib_cm_handler ib_create_cm_id ib_destroy_cm_id ib_cm_listen
ib_cm_insert_listen ib_send_cm_req ib_send_cm_rep ib_send_cm_rtu
ib_send_cm_dreq ib_send_cm_drep ib_send_cm_rej ib_prepare_cm_mra
ib_send_cm_sidr_req ib_send_cm_sidr_rep ib_cm_notify ib_cm_init_qp_attr
ibcm_reject_msg"

# Print the path of a kernel-doc script, extracting it on first use.
# Order: $KERNELDOC, a full kernel tree at $KDIR, the cached copy.
ibcm_kernel_doc() {
	local dir="$IBCM_CACHE/kernel-doc" tarball tmp

	if [ -n "${KERNELDOC:-}" ]; then
		echo "$KERNELDOC"
		return
	fi
	if [ -n "${KDIR:-}" ] && [ -x "$KDIR/scripts/kernel-doc" ]; then
		echo "$KDIR/scripts/kernel-doc"
		return
	fi
	# get_abi.py came later: a cache without it is made again.
	if [ ! -f "$dir/.done" ] || [ ! -f "$dir/tools/docs/get_abi.py" ]; then
		tarball=$(find "$IBCM_ROOT/usr/src" /usr/src -maxdepth 1 \
			-name 'linux-source-*.tar.xz' 2>/dev/null | head -n1)
		if [ -z "$tarball" ] && [ ! -d "$IBCM_ROOT" ]; then
			"$IBCM_VM_DIR/mkroot.sh" >&2
			tarball=$(find "$IBCM_ROOT/usr/src" -maxdepth 1 \
				-name 'linux-source-*.tar.xz' | head -n1)
		fi
		if [ -z "$tarball" ]; then
			echo "man: no linux-source tarball found for kernel-doc" >&2
			return 1
		fi
		echo "man: extracting kernel-doc from ${tarball##*/}" >&2
		mkdir -p "$IBCM_CACHE"
		tmp=$(mktemp -d "$IBCM_CACHE/kernel-doc.XXXXXX")
		# kernel-doc is a symlink to tools/docs/kernel-doc, which
		# imports its parser from tools/lib/python; so does the ABI
		# file checker, get_abi.py.
		tar -xJf "$tarball" -C "$tmp" --strip-components=1 \
			--wildcards '*/scripts/kernel-doc' '*/tools/docs/kernel-doc' \
			'*/tools/docs/get_abi.py' '*/tools/lib/python' ||
			{ rm -rf "$tmp"; return 1; }
		touch "$tmp/.done"
		rm -rf "$dir"
		mv "$tmp" "$dir"
	fi
	echo "$dir/scripts/kernel-doc"
}

# Run man(1) with the given arguments where man-db is: in the sid root if
# there is one (the system the module is for), else on this system.
# Paths must lie inside the repository, which the root sees at the same
# place.
ibcm_manenv() {
	if [ -z "${IBCM_MAN_HOST:-}" ] && [ -x "$IBCM_ROOT/usr/bin/man" ] &&
	   [ "$(id -u)" = 0 ]; then
		"$IBCM_VM_DIR/inroot.sh" "$@"
	else
		"$@"
	fi
}
