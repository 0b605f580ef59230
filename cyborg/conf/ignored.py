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
"""Options of the replaced service that mean nothing to Cyborg.

Each is registered in its group's module, so that configuration files
written for that service load and the sample lists them, and is deprecated
for removal with the reason it has no effect:
:func:`cyborg.conf.opts.warn_deprecated` logs a warning for each one a
file sets.
"""


def option(opt_class, name, reason, **kwargs):
    """An option that is accepted and ignored, for the reason given."""
    return opt_class(name, deprecated_for_removal=True,
                     deprecated_reason=reason,
                     help='Ignored: %s' % reason, **kwargs)
