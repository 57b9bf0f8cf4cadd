// SPDX-License-Identifier: GPL-2.0
/*
 * cm_slow - a kernel consumer of the CM whose handler takes its time.
 *
 * Kernel ULPs do real work in their REQ handlers: ib_srpt, nvmet-rdma and
 * IPoIB CM allocate and set up QPs there, and a handler that takes
 * milliseconds is normal.  This module stands in for such a consumer in
 * the flood test.  It listens on one device for one service ID and
 * answers every connection request after sleeping delay_ms in the
 * handler: a REQ with a REJ (consumer defined), a SIDR_REQ with a
 * SIDR_REP (status REJECT).  Its handler returns non-zero, so the CM
 * destroys each new id after the callback; nothing stays behind.
 *
 *   insmod cm_slow.ko device=rxe0 service_id=0x1061d4d delay_ms=20
 *
 * The parameters req_handled and sidr_handled (read only) count the
 * requests it answered.  Unloading destroys the listener and waits for the
 * handlers still running.
 */
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/wait.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>

static char *device = "rxe0";
module_param(device, charp, 0444);
MODULE_PARM_DESC(device, "RDMA device to listen on");

static unsigned long service_id;
module_param(service_id, ulong, 0444);
MODULE_PARM_DESC(service_id, "service ID to listen for (REQ and SIDR_REQ)");

static unsigned int delay_ms = 20;
module_param(delay_ms, uint, 0444);
MODULE_PARM_DESC(delay_ms, "milliseconds the handler sleeps per request");

static atomic_t req_handled = ATOMIC_INIT(0);
static atomic_t sidr_handled = ATOMIC_INIT(0);

static int slow_count_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read((atomic_t *)kp->arg));
}

static const struct kernel_param_ops slow_count_ops = {
	.get = slow_count_get,
};

module_param_cb(req_handled, &slow_count_ops, &req_handled, 0444);
MODULE_PARM_DESC(req_handled, "REQs answered");
module_param_cb(sidr_handled, &slow_count_ops, &sidr_handled, 0444);
MODULE_PARM_DESC(sidr_handled, "SIDR_REQs answered");

static struct ib_cm_id *slow_listener;
static atomic_t slow_running = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(slow_idle);

static int slow_handler(struct ib_cm_id *cm_id, const struct ib_cm_event *event)
{
	struct ib_cm_sidr_rep_param rep = { .status = IB_SIDR_REJECT };
	int destroy = 0;

	atomic_inc(&slow_running);
	switch (event->event) {
	case IB_CM_REQ_RECEIVED:
		msleep(delay_ms);
		ib_send_cm_rej(cm_id, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0,
			       NULL, 0);
		atomic_inc(&req_handled);
		destroy = 1;
		break;
	case IB_CM_SIDR_REQ_RECEIVED:
		msleep(delay_ms);
		ib_send_cm_sidr_rep(cm_id, &rep);
		atomic_inc(&sidr_handled);
		destroy = 1;
		break;
	default:
		break;
	}
	if (atomic_dec_and_test(&slow_running))
		wake_up_all(&slow_idle);
	return destroy;
}

static int slow_add(struct ib_device *ibdev)
{
	struct ib_cm_id *id;
	int ret;

	if (strcmp(dev_name(&ibdev->dev), device) || slow_listener)
		return -EOPNOTSUPP;
	id = ib_create_cm_id(ibdev, slow_handler, NULL);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = ib_cm_listen(id, cpu_to_be64(service_id));
	if (ret) {
		ib_destroy_cm_id(id);
		return ret;
	}
	slow_listener = id;
	pr_info("cm_slow: listening on %s for service ID %#lx, %u ms per request\n",
		device, service_id, delay_ms);
	return 0;
}

static void slow_remove(struct ib_device *ibdev, void *client_data)
{
	if (!slow_listener || slow_listener->device != ibdev)
		return;
	ib_destroy_cm_id(slow_listener);
	slow_listener = NULL;
}

static struct ib_client slow_client = {
	.name = "cm_slow",
	.add = slow_add,
	.remove = slow_remove,
};

static int __init slow_init(void)
{
	if (!service_id)
		return -EINVAL;
	return ib_register_client(&slow_client);
}

static void __exit slow_exit(void)
{
	ib_unregister_client(&slow_client);
	/*
	 * The listener is gone, but a handler for one of its new ids may
	 * still be sleeping.  A new id's handler starts with its listener
	 * still there, so waiting a little longer than one handler's run for
	 * the count to fall to zero covers the last of them.
	 */
	msleep(delay_ms + 100);
	wait_event(slow_idle, !atomic_read(&slow_running));
}

module_init(slow_init);
module_exit(slow_exit);

MODULE_DESCRIPTION("A slow kernel consumer of the IB CM, for the flood test");
MODULE_LICENSE("GPL");
