/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Functions ib_core exports for its clients but declares only in its
 * private core_priv.h, which the kernel headers package does not ship.
 * The declarations match Linux 7.2; in-tree builds see the same ones.
 */
#ifndef IB_CORE_CLIENT_H
#define IB_CORE_CLIENT_H

#include <linux/sysfs.h>
#include <linux/types.h>

struct ib_device;

int ib_port_register_client_groups(struct ib_device *ibdev, u32 port_num,
				   const struct attribute_group **groups);
void ib_port_unregister_client_groups(struct ib_device *ibdev, u32 port_num,
				      const struct attribute_group **groups);

#endif /* IB_CORE_CLIENT_H */
