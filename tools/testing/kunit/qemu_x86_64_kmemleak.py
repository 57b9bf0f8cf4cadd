# SPDX-License-Identifier: GPL-2.0
#
# kunit.py --qemu_config for run.sh --debug: kunit.py's own x86_64 machine,
# except that the kernel goes on to /init (kmemleak-init.sh, in a built-in
# initramfs) after the suites instead of rebooting.  kunit.py loads this
# file as if it lay in its qemu_configs/ directory.
from ..qemu_config import QemuArchParams

QEMU_ARCH = QemuArchParams(linux_arch='x86_64',
			   kconfig='''
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y''',
			   qemu_arch='x86_64',
			   kernel_path='arch/x86/boot/bzImage',
			   kernel_command_line='console=ttyS0 kunit_shutdown=none',
			   extra_qemu_params=['-bios', 'qboot.rom'])
