# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.

"""keystoneauth1 option helpers shared by the service-client groups."""

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

# Endpoints on the internal network are preferred; the public one is the
# fallback for clouds that publish only that.
DEFAULT_VALID_INTERFACES = ['internal', 'public']

# The auth plugin whose options are shown in the sample. Other plugins work
# too; their options are loaded when auth_type names them.
SAMPLE_AUTH_PLUGIN = 'password'


def _dedup(opts):
    """Drop later options that share a dest with an earlier one."""
    seen = set()
    result = []
    for opt in opts:
        if opt.dest not in seen:
            seen.add(opt.dest)
            result.append(opt)
    return result


def adapter_opts(service_type, deprecated_opts=None):
    """Adapter options with this project's defaults for one service.

    :param deprecated_opts: ``{option name: [DeprecatedOpt]}``, older names
        of session or adapter options, as keystoneauth1 takes them.
    """
    opts = ks_loading.get_adapter_conf_options(
        include_deprecated=False, deprecated_opts=deprecated_opts)
    cfg.set_defaults(opts, service_type=service_type,
                     valid_interfaces=list(DEFAULT_VALID_INTERFACES))
    return opts


def register_session_and_auth(conf, group, deprecated_opts=None):
    """Register the session and auth options of a keystoneauth group.

    keystoneauth1's functions take the group's name: given the OptGroup
    itself, keystoneauth1 5.15 reads ``conf[group]`` and so registers a
    second group keyed by the object.
    """
    ks_loading.register_session_conf_options(
        conf, group.name, deprecated_opts=deprecated_opts)
    ks_loading.register_auth_conf_options(conf, group.name)


def register_client_opts(conf, group, service_type, deprecated_opts=None):
    """Register session, auth and adapter options for a service client."""
    register_session_and_auth(conf, group, deprecated_opts)
    conf.register_opts(adapter_opts(service_type, deprecated_opts),
                       group=group)


def list_session_and_auth(deprecated_opts=None):
    """Session, common auth and sample plugin options, for the sample."""
    opts = (ks_loading.get_session_conf_options(
                deprecated_opts=deprecated_opts) +
            ks_loading.get_auth_common_conf_options() +
            ks_loading.get_auth_plugin_conf_options(SAMPLE_AUTH_PLUGIN))
    return _dedup(opts)


def list_client_opts(service_type, deprecated_opts=None):
    """All keystoneauth options of a service-client group, for the sample."""
    return _dedup(list_session_and_auth(deprecated_opts) +
                  adapter_opts(service_type, deprecated_opts))
