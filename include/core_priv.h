/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Out of tree, this file stands in for ib_core's private
 * drivers/infiniband/core/core_priv.h, which the kernel headers package
 * does not ship: of it, the CM needs only the two functions below, which
 * ib_core exports for its clients.  The declarations are those of Linux
 * 7.2.  In the kernel tree, cm.c's #include "core_priv.h" finds the real
 * file next to it instead.
 */
#ifndef IB_CM_CORE_PRIV_H
#define IB_CM_CORE_PRIV_H

#include <linux/sysfs.h>
#include <linux/types.h>

struct ib_device;

int ib_port_register_client_groups(struct ib_device *ibdev, u32 port_num,
				   const struct attribute_group **groups);
void ib_port_unregister_client_groups(struct ib_device *ibdev, u32 port_num,
				      const struct attribute_group **groups);

#endif /* IB_CM_CORE_PRIV_H */
