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
"""Policy rules in code, one module per noun, for oslo.policy.

``list_rules`` is the ``oslo.policy.policies`` entry point that the
oslopolicy tools and the enforcer read.
"""

import itertools

from cyborg.policies import accelerator_request
from cyborg.policies import attribute
from cyborg.policies import base
from cyborg.policies import deployable
from cyborg.policies import device
from cyborg.policies import device_profile
from cyborg.policies import metric


def list_rules():
    return list(itertools.chain(
        base.list_rules(),
        device_profile.list_rules(),
        accelerator_request.list_rules(),
        device.list_rules(),
        deployable.list_rules(),
        attribute.list_rules(),
        metric.list_rules(),
    ))
