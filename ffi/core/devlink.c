// SPDX-License-Identifier: GPL-2.0
/*
 * devlink for the core driver: the kernel crate of Linux 7.3 has no devlink bindings.
 *
 * One devlink instance per PCI function, allocated before the bring-up and freed at
 * unbind (so it outlives a recovery of the function). It answers `devlink dev info`,
 * carries the health reporters `fw` (diagnose, dump) and `fw_fatal` (dump, recover,
 * with devlink's auto-recover and grace period: upstream's 60 s on a PF, 30 s on a
 * VF), and reloads the function (`devlink dev reload`, action driver_reinit), as
 * upstream mlx5_core's devlink.c and health.c name and lay them out. The values and
 * the actions come from Rust through trampolines (mlx5rs_devlink_rs_*, in
 * ffi/core/devlink.rs), called with the `rust` pointer given at allocation; this file
 * only formats and dispatches.
 *
 * Locks, as devlink takes them: a reload runs with the device lock then the instance
 * lock held (devlink's netlink layer takes both); a user's `health recover` with the
 * instance lock only; a report's recover with the instance lock, taken inside
 * devlink_health_report() (ours are made with the device lock held, see
 * mlx5rs_devlink_report()).
 *
 * The generic parameter enable_remote_dev_reset (runtime, default true), registered
 * only when the firmware offers MFRL (MCAM), as upstream's mlx5_fw_reset_init(): the
 * driver reads it when a sync reset's request arrives (false: the request is nacked).
 * A sync reset another host started ends with devlink_remote_reload_actions_performed()
 * (driver_reinit and fw_activate), as upstream's mlx5_fw_reset_complete_reload().
 *
 * The generic driverinit parameters io_eq_size and event_eq_size, and enable_rdma when
 * the InfiniBand provider is built, as upstream's mlx5_devlink_params and
 * mlx5_devlink_rdma_params: a value set takes effect at the next `devlink dev reload`
 * (devlink applies it before reload_up), which passes the values to Rust; every later
 * load of the function (a recovery) uses them too.
 *
 * Not advertised (the driver does not do them): reload action fw_activate and limit
 * no_reset, a network-namespace change on reload, other parameters, flash update,
 * traps.
 */
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/devlink.h>
#include "mlx5rs_ffi.h"

/* What the devlink instance carries (devlink_priv()). */
struct mlx5rs_devlink_priv {
	struct pci_dev *pdev;
	const void *rust;
	struct devlink_health_reporter *fw;
	struct devlink_health_reporter *fw_fatal;
	/* enable_remote_dev_reset is registered (MCAM offers MFRL). */
	bool remote_reset_param;
	/* Its value (READ_ONCE / WRITE_ONCE: read without the instance lock). */
	bool remote_reset_allowed;
	/* io_eq_size and event_eq_size are registered. */
	bool eq_params;
	/* enable_rdma is registered. */
	bool rdma_param;
	/* The driverinit values given at registration. */
	struct mlx5rs_devlink_driverinit defaults;
};

/* Implemented in Rust (ffi/core/devlink.rs). */
int mlx5rs_devlink_rs_info(const void *rust, struct mlx5rs_devlink_info *out);
int mlx5rs_devlink_rs_health(const void *rust, struct mlx5rs_health_buf *out);
int mlx5rs_devlink_rs_recover(const void *rust);
int mlx5rs_devlink_rs_recover_here(const void *here);
int mlx5rs_devlink_rs_reload(const void *rust, int up,
			     const struct mlx5rs_devlink_driverinit *init);

/*
 * The context of a report made by mlx5rs_devlink_report(): what a dump shows first,
 * and what a recover called from within that report runs (NULL: none).
 */
struct report_ctx {
	struct mlx5rs_fw_report r;
	const void *here;
};

static struct mlx5rs_devlink_priv *priv_of(struct devlink *devlink)
{
	return devlink_priv(devlink);
}

/*
 * The board serial number (VPD keyword SN, up to its first space) and the serial
 * number (VPD keyword V3), when the function has a VPD that holds them; nothing
 * otherwise, as upstream's mlx5_devlink_serial_numbers_put() does.
 */
static int serial_numbers_put(struct pci_dev *pdev, struct devlink_info_req *req)
{
	unsigned int size, len;
	char *str;
	u8 *vpd;
	int off, err = 0;

	vpd = pci_vpd_alloc(pdev, &size);
	if (IS_ERR(vpd))
		return 0;
	off = pci_vpd_find_ro_info_keyword(vpd, size, PCI_VPD_RO_KEYWORD_SERIALNO, &len);
	if (off >= 0) {
		str = kstrndup(vpd + off, len, GFP_KERNEL);
		if (!str) {
			err = -ENOMEM;
			goto out;
		}
		*strchrnul(str, ' ') = '\0';
		err = devlink_info_board_serial_number_put(req, str);
		kfree(str);
		if (err)
			goto out;
	}
	off = pci_vpd_find_ro_info_keyword(vpd, size, "V3", &len);
	if (off >= 0) {
		str = kstrndup(vpd + off, len, GFP_KERNEL);
		if (!str) {
			err = -ENOMEM;
			goto out;
		}
		err = devlink_info_serial_number_put(req, str);
		kfree(str);
	}
out:
	kfree(vpd);
	return err;
}

static int mlx5rs_devlink_info_get(struct devlink *devlink, struct devlink_info_req *req,
				   struct netlink_ext_ack *extack)
{
	struct mlx5rs_devlink_info info = {};
	int err;

	BUILD_BUG_ON(sizeof(info) != MLX5RS_DEVLINK_INFO_SIZE);
	err = mlx5rs_devlink_rs_info(priv_of(devlink)->rust, &info);
	if (err)
		return err;
	/* Upstream reports nothing but the driver name for a VF. */
	if (!info.is_pf)
		return 0;
	err = serial_numbers_put(priv_of(devlink)->pdev, req);
	if (err)
		return err;
	info.psid[sizeof(info.psid) - 1] = '\0';
	info.fw_running[sizeof(info.fw_running) - 1] = '\0';
	info.fw_stored[sizeof(info.fw_stored) - 1] = '\0';
	err = devlink_info_version_fixed_put(req, "fw.psid", info.psid);
	if (err)
		return err;
	if (info.fw_running[0]) {
		err = devlink_info_version_running_put(req, "fw.version", info.fw_running);
		if (!err)
			err = devlink_info_version_running_put(req, DEVLINK_INFO_VERSION_GENERIC_FW,
							       info.fw_running);
		if (err)
			return err;
	}
	if (info.fw_stored[0]) {
		err = devlink_info_version_stored_put(req, "fw.version", info.fw_stored);
		if (!err)
			err = devlink_info_version_stored_put(req, DEVLINK_INFO_VERSION_GENERIC_FW,
							      info.fw_stored);
	}
	return err;
}

/*
 * `devlink dev reload` (action driver_reinit): the function's software state is
 * unloaded here and loaded again in reload_up, as upstream's
 * mlx5_devlink_reload_down/up do. devlink holds the device lock for both.
 */
static int mlx5rs_devlink_reload_down(struct devlink *devlink, bool netns_change,
				      enum devlink_reload_action action,
				      enum devlink_reload_limit limit,
				      struct netlink_ext_ack *extack)
{
	struct mlx5rs_devlink_priv *priv = priv_of(devlink);

	if (action != DEVLINK_RELOAD_ACTION_DRIVER_REINIT ||
	    limit != DEVLINK_RELOAD_LIMIT_UNSPEC)
		return -EOPNOTSUPP;
	if (netns_change) {
		NL_SET_ERR_MSG_MOD(extack, "changing the network namespace is not supported");
		return -EOPNOTSUPP;
	}
	if (pci_num_vf(priv->pdev))
		NL_SET_ERR_MSG_MOD(extack, "reload while VFs are present is unfavorable");
	return mlx5rs_devlink_rs_reload(priv->rust, 0, NULL);
}

/*
 * A driverinit value: devlink's (a value set since the last reload was applied before
 * reload_up), else the default given at registration. The instance lock is held.
 */
static u32 driverinit_get(struct devlink *devlink, u32 id, bool registered, u32 dflt, bool vbool)
{
	union devlink_param_value val;

	if (!registered || devl_param_driverinit_value_get(devlink, id, &val))
		return dflt;
	return vbool ? val.vbool : val.vu32;
}

static int mlx5rs_devlink_reload_up(struct devlink *devlink, enum devlink_reload_action action,
				    enum devlink_reload_limit limit, u32 *actions_performed,
				    struct netlink_ext_ack *extack)
{
	struct mlx5rs_devlink_priv *priv = priv_of(devlink);
	struct mlx5rs_devlink_driverinit init = {
		.io_eq_size = driverinit_get(devlink, DEVLINK_PARAM_GENERIC_ID_IO_EQ_SIZE,
					     priv->eq_params, priv->defaults.io_eq_size, false),
		.event_eq_size = driverinit_get(devlink, DEVLINK_PARAM_GENERIC_ID_EVENT_EQ_SIZE,
						priv->eq_params, priv->defaults.event_eq_size,
						false),
		.enable_rdma = driverinit_get(devlink, DEVLINK_PARAM_GENERIC_ID_ENABLE_RDMA,
					      priv->rdma_param, priv->defaults.enable_rdma, true),
	};
	int err;

	*actions_performed = BIT(action);
	err = mlx5rs_devlink_rs_reload(priv->rust, 1, &init);
	if (err)
		NL_SET_ERR_MSG_MOD(extack, "loading the function again failed (see the kernel log)");
	return err;
}

static const struct devlink_ops mlx5rs_devlink_ops = {
	.info_get = mlx5rs_devlink_info_get,
	.reload_actions = BIT(DEVLINK_RELOAD_ACTION_DRIVER_REINIT),
	.reload_down = mlx5rs_devlink_reload_down,
	.reload_up = mlx5rs_devlink_reload_up,
};

/* enable_remote_dev_reset: upstream's mlx5_fw_reset_enable_remote_dev_reset_get/set. */
static int remote_reset_get(struct devlink *devlink, u32 id, struct devlink_param_gset_ctx *ctx,
			    struct netlink_ext_ack *extack)
{
	ctx->val.vbool = READ_ONCE(priv_of(devlink)->remote_reset_allowed);
	return 0;
}

static int remote_reset_set(struct devlink *devlink, u32 id, struct devlink_param_gset_ctx *ctx,
			    struct netlink_ext_ack *extack)
{
	WRITE_ONCE(priv_of(devlink)->remote_reset_allowed, ctx->val.vbool);
	return 0;
}

static const struct devlink_param remote_reset_params[] = {
	DEVLINK_PARAM_GENERIC(ENABLE_REMOTE_DEV_RESET, BIT(DEVLINK_PARAM_CMODE_RUNTIME),
			      remote_reset_get, remote_reset_set, NULL),
};

/* io_eq_size and event_eq_size: upstream's mlx5_devlink_eq_depth_validate(). */
static int eq_depth_validate(struct devlink *devlink, u32 id, union devlink_param_value *val,
			     struct netlink_ext_ack *extack)
{
	if (val->vu32 >= MLX5RS_EQ_DEPTH_MIN && val->vu32 <= MLX5RS_EQ_DEPTH_MAX)
		return 0;
	NL_SET_ERR_MSG_MOD(extack, "an EQ depth is 64 to 4096 entries");
	return -EINVAL;
}

static const struct devlink_param eq_params[] = {
	DEVLINK_PARAM_GENERIC(IO_EQ_SIZE, BIT(DEVLINK_PARAM_CMODE_DRIVERINIT), NULL, NULL,
			      eq_depth_validate),
	DEVLINK_PARAM_GENERIC(EVENT_EQ_SIZE, BIT(DEVLINK_PARAM_CMODE_DRIVERINIT), NULL, NULL,
			      eq_depth_validate),
};

static const struct devlink_param rdma_params[] = {
	DEVLINK_PARAM_GENERIC(ENABLE_RDMA, BIT(DEVLINK_PARAM_CMODE_DRIVERINIT), NULL, NULL, NULL),
};

/* Unregisters the parameters that are registered; the instance lock is held. */
static void params_unregister(struct devlink *devlink)
{
	struct mlx5rs_devlink_priv *priv = priv_of(devlink);

	if (priv->rdma_param)
		devl_params_unregister(devlink, rdma_params, ARRAY_SIZE(rdma_params));
	if (priv->eq_params)
		devl_params_unregister(devlink, eq_params, ARRAY_SIZE(eq_params));
	if (priv->remote_reset_param)
		devl_params_unregister(devlink, remote_reset_params,
				       ARRAY_SIZE(remote_reset_params));
	priv->rdma_param = false;
	priv->eq_params = false;
	priv->remote_reset_param = false;
}

/*
 * Registers the parameters and sets the driverinit ones' defaults; the instance lock
 * is held. Return: 0, or devl_params_register()'s error (then none is registered).
 */
static int params_register(struct devlink *devlink, bool remote_reset, bool rdma)
{
	struct mlx5rs_devlink_priv *priv = priv_of(devlink);
	union devlink_param_value val;
	int err;

	if (remote_reset) {
		err = devl_params_register(devlink, remote_reset_params,
					   ARRAY_SIZE(remote_reset_params));
		if (err)
			return err;
		priv->remote_reset_param = true;
	}
	err = devl_params_register(devlink, eq_params, ARRAY_SIZE(eq_params));
	if (err)
		goto fail;
	priv->eq_params = true;
	val.vu32 = priv->defaults.io_eq_size;
	devl_param_driverinit_value_set(devlink, DEVLINK_PARAM_GENERIC_ID_IO_EQ_SIZE, &val);
	val.vu32 = priv->defaults.event_eq_size;
	devl_param_driverinit_value_set(devlink, DEVLINK_PARAM_GENERIC_ID_EVENT_EQ_SIZE, &val);
	if (rdma) {
		err = devl_params_register(devlink, rdma_params, ARRAY_SIZE(rdma_params));
		if (err)
			goto fail;
		priv->rdma_param = true;
		val.vbool = priv->defaults.enable_rdma;
		devl_param_driverinit_value_set(devlink, DEVLINK_PARAM_GENERIC_ID_ENABLE_RDMA,
						&val);
	}
	return 0;
fail:
	params_unregister(devlink);
	return err;
}

/* The health buffer, or an error when the function's registers cannot be read. */
static int health_read(struct devlink_health_reporter *reporter, struct mlx5rs_health_buf *h)
{
	struct mlx5rs_devlink_priv *priv = devlink_health_reporter_priv(reporter);

	BUILD_BUG_ON(sizeof(*h) != MLX5RS_HEALTH_BUF_SIZE);
	memset(h, 0, sizeof(*h));
	return mlx5rs_devlink_rs_health(priv->rust, h);
}

/* `fw` diagnose: the syndrome, and its description when there is one. */
static int fw_diagnose(struct devlink_health_reporter *reporter, struct devlink_fmsg *fmsg,
		       struct netlink_ext_ack *extack)
{
	struct mlx5rs_health_buf h;
	int err;

	err = health_read(reporter, &h);
	if (err)
		return err;
	devlink_fmsg_u8_pair_put(fmsg, "Syndrome", h.synd);
	if (h.synd) {
		h.synd_name[sizeof(h.synd_name) - 1] = '\0';
		devlink_fmsg_string_pair_put(fmsg, "Description", h.synd_name);
	}
	return 0;
}

/* The report's context: the syndrome and the health-counter misses at the report. */
static void ctx_put(struct devlink_fmsg *fmsg, const struct mlx5rs_fw_report *r)
{
	devlink_fmsg_u8_pair_put(fmsg, "syndrome", r->synd);
	devlink_fmsg_u32_pair_put(fmsg, "fw_miss_counter", r->miss_counter);
}

/* The health buffer, field by field, when it holds a syndrome. */
static void buffer_put(struct devlink_fmsg *fmsg, const struct mlx5rs_health_buf *h)
{
	int i;

	if (!h->synd)
		return;
	devlink_fmsg_pair_nest_start(fmsg, "health buffer");
	devlink_fmsg_obj_nest_start(fmsg);
	devlink_fmsg_arr_pair_nest_start(fmsg, "assert_var");
	for (i = 0; i < ARRAY_SIZE(h->assert_var); i++)
		devlink_fmsg_u32_put(fmsg, h->assert_var[i]);
	devlink_fmsg_arr_pair_nest_end(fmsg);
	devlink_fmsg_u32_pair_put(fmsg, "assert_exit_ptr", h->assert_exit_ptr);
	devlink_fmsg_u32_pair_put(fmsg, "assert_callra", h->assert_callra);
	devlink_fmsg_u32_pair_put(fmsg, "time", h->time);
	devlink_fmsg_u32_pair_put(fmsg, "hw_id", h->hw_id);
	devlink_fmsg_u8_pair_put(fmsg, "rfr", h->rfr);
	devlink_fmsg_u8_pair_put(fmsg, "severity", h->severity);
	devlink_fmsg_u8_pair_put(fmsg, "irisc_index", h->irisc_index);
	devlink_fmsg_u8_pair_put(fmsg, "synd", h->synd);
	devlink_fmsg_u32_pair_put(fmsg, "ext_synd", h->ext_synd);
	devlink_fmsg_u32_pair_put(fmsg, "raw_fw_ver", h->raw_fw_ver);
	devlink_fmsg_obj_nest_end(fmsg);
	devlink_fmsg_pair_nest_end(fmsg);
}

/* `fw` and `fw_fatal` dump: the report's context (none on a dump asked for by a user
 * with no stored one), then the health buffer. */
static int fw_dump(struct devlink_health_reporter *reporter, struct devlink_fmsg *fmsg,
		   void *priv_ctx, struct netlink_ext_ack *extack)
{
	struct mlx5rs_health_buf h;
	int err;

	err = health_read(reporter, &h);
	if (err)
		return err;
	if (priv_ctx)
		ctx_put(fmsg, &((const struct report_ctx *)priv_ctx)->r);
	buffer_put(fmsg, &h);
	return 0;
}

/*
 * `fw_fatal` recover. From within our own report (priv_ctx set: the recovery work,
 * which holds the device lock) it runs what that report passed; from a user's
 * `devlink health recover` (no context) it asks Rust to recover the function.
 * devlink marks the reporter healthy when this returns 0.
 */
static int fw_fatal_recover(struct devlink_health_reporter *reporter, void *priv_ctx,
			    struct netlink_ext_ack *extack)
{
	struct mlx5rs_devlink_priv *priv = devlink_health_reporter_priv(reporter);
	const struct report_ctx *ctx = priv_ctx;
	int err;

	if (ctx)
		return ctx->here ? mlx5rs_devlink_rs_recover_here(ctx->here) : -EOPNOTSUPP;
	err = mlx5rs_devlink_rs_recover(priv->rust);
	if (err == -EBUSY)
		NL_SET_ERR_MSG_MOD(extack, "a recovery of this function is under way");
	else if (err)
		NL_SET_ERR_MSG_MOD(extack, "recovery failed (see the kernel log)");
	return err;
}

static const struct devlink_health_reporter_ops fw_ops = {
	.name = "fw",
	.diagnose = fw_diagnose,
	.dump = fw_dump,
};

/* Upstream's grace periods between automatic recoveries (health.c). */
#define FW_FATAL_PF_GRACEFUL_PERIOD 60000
#define FW_FATAL_VF_GRACEFUL_PERIOD 30000

static const struct devlink_health_reporter_ops fw_fatal_pf_ops = {
	.name = "fw_fatal",
	.recover = fw_fatal_recover,
	.dump = fw_dump,
	.default_graceful_period = FW_FATAL_PF_GRACEFUL_PERIOD,
};

static const struct devlink_health_reporter_ops fw_fatal_vf_ops = {
	.name = "fw_fatal",
	.recover = fw_fatal_recover,
	.dump = fw_dump,
	.default_graceful_period = FW_FATAL_VF_GRACEFUL_PERIOD,
};

/* Destroys the reporters that exist; the instance lock is held. */
static void destroy_reporters(struct mlx5rs_devlink_priv *priv)
{
	if (priv->fw_fatal)
		devl_health_reporter_destroy(priv->fw_fatal);
	if (priv->fw)
		devl_health_reporter_destroy(priv->fw);
	priv->fw = NULL;
	priv->fw_fatal = NULL;
}

/**
 * mlx5rs_devlink_alloc() - a devlink instance for a PCI function, not registered
 * @pdev: the PCI function (bound to this driver: probe is running)
 * @rust: what the trampolines get back; must stay valid until mlx5rs_devlink_free()
 *
 * Return: the instance, or NULL when out of memory.
 */
struct devlink *mlx5rs_devlink_alloc(struct pci_dev *pdev, const void *rust)
{
	struct mlx5rs_devlink_priv *priv;
	struct devlink *devlink;

	devlink = devlink_alloc(&mlx5rs_devlink_ops, sizeof(*priv), &pdev->dev);
	if (!devlink)
		return NULL;
	priv = devlink_priv(devlink);
	priv->pdev = pdev;
	priv->rust = rust;
	priv->remote_reset_allowed = true;
	return devlink;
}

/**
 * mlx5rs_devlink_register() - create the health reporters and register the instance
 * @devlink: from mlx5rs_devlink_alloc(), not registered
 * @is_vf: the function is a VF (the `fw_fatal` grace period is then 30 s, else 60 s)
 * @remote_reset: register enable_remote_dev_reset (the firmware offers MFRL)
 * @rdma: register enable_rdma (the InfiniBand provider is built)
 * @defaults: the driverinit parameters' defaults (EQ depths within the bounds)
 *
 * A reporter that cannot be created is missing (warned), as upstream's
 * mlx5_fw_reporters_create() leaves it; the instance registers anyway. A parameter
 * that cannot be registered fails the registration, as upstream's probe fails when
 * mlx5_fw_reset_init() does.
 *
 * Return: 0, -EINVAL for an EQ depth out of bounds, or devl_params_register()'s or
 * devl_register()'s error (then no reporter and no parameter is left).
 */
int mlx5rs_devlink_register(struct devlink *devlink, int is_vf, int remote_reset, int rdma,
			    const struct mlx5rs_devlink_driverinit *defaults)
{
	struct mlx5rs_devlink_priv *priv = devlink_priv(devlink);
	struct devlink_health_reporter *r;
	int err;

	BUILD_BUG_ON(sizeof(*defaults) != MLX5RS_DEVLINK_DRIVERINIT_SIZE);
	if (defaults->io_eq_size < MLX5RS_EQ_DEPTH_MIN ||
	    defaults->io_eq_size > MLX5RS_EQ_DEPTH_MAX ||
	    defaults->event_eq_size < MLX5RS_EQ_DEPTH_MIN ||
	    defaults->event_eq_size > MLX5RS_EQ_DEPTH_MAX)
		return -EINVAL;
	priv->defaults = *defaults;
	devl_lock(devlink);
	r = devl_health_reporter_create(devlink, &fw_ops, priv);
	if (IS_ERR(r))
		dev_warn(&priv->pdev->dev, "no fw health reporter: %pe\n", r);
	priv->fw = IS_ERR(r) ? NULL : r;
	r = devl_health_reporter_create(devlink, is_vf ? &fw_fatal_vf_ops : &fw_fatal_pf_ops,
					priv);
	if (IS_ERR(r))
		dev_warn(&priv->pdev->dev, "no fw_fatal health reporter: %pe\n", r);
	priv->fw_fatal = IS_ERR(r) ? NULL : r;
	err = params_register(devlink, remote_reset, rdma);
	if (err) {
		destroy_reporters(priv);
		goto out;
	}
	err = devl_register(devlink);
	if (err) {
		params_unregister(devlink);
		destroy_reporters(priv);
	}
out:
	devl_unlock(devlink);
	return err;
}

/**
 * mlx5rs_devlink_remote_reset_allowed() - the value of enable_remote_dev_reset
 * @devlink: from mlx5rs_devlink_alloc()
 *
 * Takes no lock (a bool read once; devlink sets it under its instance lock).
 *
 * Return: 1 when a sync reset's request may be acked, else 0 (true by default).
 */
int mlx5rs_devlink_remote_reset_allowed(struct devlink *devlink)
{
	return READ_ONCE(priv_of(devlink)->remote_reset_allowed);
}

/**
 * mlx5rs_devlink_remote_reload_done() - tell devlink a sync reset reloaded the function
 * @devlink: registered by mlx5rs_devlink_register(), not yet unregistered (the caller
 *           serializes this with mlx5rs_devlink_unregister())
 *
 * As upstream's mlx5_fw_reset_complete_reload() for a reset this host did not start:
 * driver_reinit and fw_activate counted as remote reload actions (`devlink dev show
 * -s` shows them) and a DEVLINK_CMD_NEW notification, under the instance lock.
 * Sleeps.
 */
void mlx5rs_devlink_remote_reload_done(struct devlink *devlink)
{
	devl_lock(devlink);
	devlink_remote_reload_actions_performed(devlink, DEVLINK_RELOAD_LIMIT_UNSPEC,
						BIT(DEVLINK_RELOAD_ACTION_DRIVER_REINIT) |
						BIT(DEVLINK_RELOAD_ACTION_FW_ACTIVATE));
	devl_unlock(devlink);
}

/**
 * mlx5rs_devlink_report() - report an error to a health reporter
 * @devlink: registered by mlx5rs_devlink_register(), not yet unregistered
 * @fatal: 0 for `fw`, else `fw_fatal`
 * @msg: the report's message
 * @r: the report's context (what a dump shows first)
 * @here: for `fw_fatal`, what a recover devlink decides on within this report runs
 *        (passed to mlx5rs_devlink_rs_recover_here(); the caller holds the device
 *        lock); NULL for `fw`
 *
 * The caller serializes this with mlx5rs_devlink_unregister() (a report must not
 * reach an unregistered instance). Sleeps (devlink takes the instance lock to store
 * the dump and to recover). Return: devlink_health_report()'s (-ECANCELED: devlink
 * refused to recover, within the grace period or after a recovery that failed), or
 * -ENOENT without the reporter.
 */
int mlx5rs_devlink_report(struct devlink *devlink, int fatal, const char *msg,
			  const struct mlx5rs_fw_report *r, const void *here)
{
	struct mlx5rs_devlink_priv *priv = devlink_priv(devlink);
	struct devlink_health_reporter *rep = fatal ? priv->fw_fatal : priv->fw;
	struct report_ctx ctx = { .r = *r, .here = fatal ? here : NULL };

	if (!rep)
		return -ENOENT;
	return devlink_health_report(rep, msg, &ctx);
}

/**
 * mlx5rs_devlink_fatal_healthy() - mark the fw_fatal reporter healthy
 * @devlink: a registered instance
 *
 * After a recovery that did not go through the reporter (a PCI error's resume), as
 * upstream's mlx5_pci_resume() does. Nothing without the reporter.
 */
void mlx5rs_devlink_fatal_healthy(struct devlink *devlink)
{
	struct mlx5rs_devlink_priv *priv = priv_of(devlink);

	if (priv->fw_fatal)
		devlink_health_reporter_state_update(priv->fw_fatal,
						     DEVLINK_HEALTH_REPORTER_STATE_HEALTHY);
}

/**
 * mlx5rs_devlink_unregister() - unregister the instance and destroy its reporters
 * @devlink: registered by mlx5rs_devlink_register()
 *
 * Waits for the user requests under way (they hold the instance lock); none runs after.
 */
void mlx5rs_devlink_unregister(struct devlink *devlink)
{
	struct mlx5rs_devlink_priv *priv = devlink_priv(devlink);

	devl_lock(devlink);
	devl_unregister(devlink);
	params_unregister(devlink);
	destroy_reporters(priv);
	devl_unlock(devlink);
}

/**
 * mlx5rs_devlink_free() - free an instance that is not registered
 * @devlink: from mlx5rs_devlink_alloc()
 */
void mlx5rs_devlink_free(struct devlink *devlink)
{
	devlink_free(devlink);
}
