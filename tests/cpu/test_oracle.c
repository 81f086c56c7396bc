// test_oracle.c — checks of the MPFR oracle itself (tools/oracle.c), so that tier 1 rests on
// something tested: values against an independent high-precision evaluation (mpmath, 60 digits,
// tabulated below), the correct rounding of saturated products at an exact midpoint, the
// shortcuts for tiny results, the ulp metric, the double-arithmetic rounding to bf16/f16, the
// derivative zeros and the input sets.
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "testutil.h"

// --- act(x) and act'(x) from mpmath ---------------------------------------------------------------
static const struct {
    enum ffn_act act;
    int deriv;
    float x;
    const char *value;
} ffn__mpmath[] = {
    {FFN_ACT_GELU_TANH, 0, -0x1.400p+4f, "-3.37545095631096731973980069206986054e-261"},
    {FFN_ACT_GELU_TANH, 0, -0x1.300p+3f, "-6.67892876678388199938865565461655916e-33"},
    {FFN_ACT_GELU_TANH, 0, -0x1.400p+2f, "-2.29179619662950604559275532854690503e-7"},
    {FFN_ACT_GELU_TANH, 0, -0x1.800p+0f, "-1.00428423019767077550575518155411664e-1"},
    {FFN_ACT_GELU_TANH, 0, -0x1.000p-1f, "-1.5428599017485607796224274263547678e-1"},
    {FFN_ACT_GELU_TANH, 0, 0x1.000p-2f, "1.49675350701685000225428680166424894e-1"},
    {FFN_ACT_GELU_TANH, 0, 0x1.000p+0f, "8.41191990608276704781995777045183861e-1"},
    {FFN_ACT_GELU_TANH, 0, 0x1.800p+1f, "2.99636260791822698116218353386810861"},
    {FFN_ACT_GELU_TANH, 0, 0x1.400p+3f, "1.0e+1"},
    {FFN_ACT_GELU_TANH, 0, -0x1.900p+3f, "-8.10199646447362091501416790717382915e-69"},
    {FFN_ACT_GELU_TANH, 0, -0x1.900p+6f, "-4.93927491083271877595580118528980144e-31057"},
    {FFN_ACT_GELU_TANH, 0, 0x1.79ca100p-67f, "4.99999984132761269452383795725170096e-21"},
    {FFN_ACT_GELU_TANH, 0, -0x1.0556400p-128f, "-1.50000032295799988613131340021852466e-39"},
    {FFN_ACT_GELU_TANH, 0, -0x1.8142a00p-1f, "-1.70040750571254022967102916799838489e-1"},
    {FFN_ACT_GELU_TANH, 0, -0x1.80ead20p-1f, "-1.70040653962207622682824913617648606e-1"},
    {FFN_ACT_GELU_TANH, 0, -0x1.4749740p+0f, "-1.2876831263059765897792599867553253e-1"},
    {FFN_ACT_GELU_TANH, 0, -0x1.80974a0p-1f, "-1.70040382567275461816672801916774109e-1"},
    {FFN_ACT_GELU_TANH, 1, -0x1.400p+4f, "-2.94243287249450286432466668128325099e-259"},
    {FFN_ACT_GELU_TANH, 1, -0x1.300p+3f, "-1.38987321923326109111374079715495366e-31"},
    {FFN_ACT_GELU_TANH, 1, -0x1.400p+2f, "-1.5463619875325945955849721803984502e-6"},
    {FFN_ACT_GELU_TANH, 1, -0x1.800p+0f, "-1.27710793151433081575633268756615379e-1"},
    {FFN_ACT_GELU_TANH, 1, -0x1.000p-1f, "1.32630096465357688439829053848187349e-1"},
    {FFN_ACT_GELU_TANH, 1, 0x1.000p-2f, "6.95354095151060429485875000973838677e-1"},
    {FFN_ACT_GELU_TANH, 1, 0x1.000p+0f, "1.08296408384578255513964241866960076"},
    {FFN_ACT_GELU_TANH, 1, 0x1.800p+1f, "1.01158416663096972620354646167791394"},
    {FFN_ACT_GELU_TANH, 1, 0x1.400p+3f, "1.0"},
    {FFN_ACT_GELU_TANH, 1, -0x1.900p+3f, "-2.83272850984726045427036133558693343e-67"},
    {FFN_ACT_GELU_TANH, 1, -0x1.900p+6f, "-1.05810641631066991595126724941151723e-31053"},
    {FFN_ACT_GELU_TANH, 1, 0x1.79ca100p-67f, "5.00000000000000000007978845354824157e-1"},
    {FFN_ACT_GELU_TANH, 1, -0x1.0556400p-128f, "5.0e-1"},
    {FFN_ACT_GELU_TANH, 1, -0x1.8142a00p-1f, "-4.8805769909549433932213532123545531e-9"},
    {FFN_ACT_GELU_TANH, 1, -0x1.80ead20p-1f, "2.88492570860561582979706367954601363e-4"},
    {FFN_ACT_GELU_TANH, 1, -0x1.4749740p+0f, "-1.2458270124281784748612284440573441e-1"},
    {FFN_ACT_GELU_TANH, 1, -0x1.80974a0p-1f, "5.63271706821174180438531831117398895e-4"},
    {FFN_ACT_GELU_ERF, 0, -0x1.400p+4f, "-5.50724823721246739015124556171493067e-88"},
    {FFN_ACT_GELU_ERF, 0, -0x1.300p+3f, "-9.96978932159447711819304116299781908e-21"},
    {FFN_ACT_GELU_ERF, 0, -0x1.400p+2f, "-1.43325785939596955836876166437322677e-6"},
    {FFN_ACT_GELU_ERF, 0, -0x1.800p+0f, "-1.00210801903287099006741061469829119e-1"},
    {FFN_ACT_GELU_ERF, 0, -0x1.000p-1f, "-1.5426876936299344818114769469583113e-1"},
    {FFN_ACT_GELU_ERF, 0, 0x1.000p-2f, "1.49676581420730931060213447895258435e-1"},
    {FFN_ACT_GELU_ERF, 0, 0x1.000p+0f, "8.41344746068542948585232545632037922e-1"},
    {FFN_ACT_GELU_ERF, 0, 0x1.800p+1f, "2.99595030590510971642004455569721507"},
    {FFN_ACT_GELU_ERF, 0, 0x1.400p+3f, "9.99999999999999999999992380146975839"},
    {FFN_ACT_GELU_ERF, 0, -0x1.900p+3f, "-4.66570537359714172153229542253926361e-35"},
    {FFN_ACT_GELU_ERF, 0, -0x1.900p+6f, "-1.34417907674419830507308016713525285e-2172"},
    {FFN_ACT_GELU_ERF, 0, 0x1.79ca100p-67f, "4.99999984132761269452383795725170096e-21"},
    {FFN_ACT_GELU_ERF, 0, -0x1.0556400p-128f, "-1.50000032295799988613131340021852466e-39"},
    {FFN_ACT_GELU_ERF, 0, -0x1.8142a00p-1f, "-1.69971110696377527065285723790552334e-1"},
    {FFN_ACT_GELU_ERF, 0, -0x1.80ead20p-1f, "-1.69971207479903630030864208434785994e-1"},
    {FFN_ACT_GELU_ERF, 0, -0x1.4749740p+0f, "-1.28540453793687504160807019100025934e-1"},
    {FFN_ACT_GELU_ERF, 0, -0x1.80974a0p-1f, "-1.69971119825779581006533465934802134e-1"},
    {FFN_ACT_GELU_ERF, 1, -0x1.400p+4f, "-1.10143604831334640422147151377654273e-86"},
    {FFN_ACT_GELU_ERF, 1, -0x1.300p+3f, "-9.46909347383138331845241653568987723e-20"},
    {FFN_ACT_GELU_ERF, 1, -0x1.400p+2f, "-7.14694600179229462786744583515741548e-6"},
    {FFN_ACT_GELU_ERF, 1, -0x1.800p+0f, "-1.27469192229979525416655295952226157e-1"},
    {FFN_ACT_GELU_ERF, 1, -0x1.000p-1f, "1.32504875343837157474955168593403434e-1"},
    {FFN_ACT_GELU_ERF, 1, 0x1.000p-2f, "6.95373354883636025976160229854921407e-1"},
    {FFN_ACT_GELU_ERF, 1, 0x1.000p+0f, "1.08331547058768629838306273856759858"},
    {FFN_ACT_GELU_ERF, 1, 0x1.800p+1f, "1.01194564720418392700015524332076806"},
    {FFN_ACT_GELU_ERF, 1, 0x1.400p+3f, "1.00000000000000000000076184000964648"},
    {FFN_ACT_GELU_ERF, 1, -0x1.900p+3f, "-5.8316685544801553656878399520369863e-34"},
    {FFN_ACT_GELU_ERF, 1, -0x1.900p+6f, "-1.34417904987404862351033605200380313e-2170"},
    {FFN_ACT_GELU_ERF, 1, 0x1.79ca100p-67f, "5.00000000000000000007978845354824157e-1"},
    {FFN_ACT_GELU_ERF, 1, -0x1.0556400p-128f, "5.0e-1"},
    {FFN_ACT_GELU_ERF, 1, -0x1.8142a00p-1f, "-2.88887327732844263061518942094250762e-4"},
    {FFN_ACT_GELU_ERF, 1, -0x1.80ead20p-1f, "-5.2273121045751549767067853475647458e-9"},
    {FFN_ACT_GELU_ERF, 1, -0x1.4749740p+0f, "-1.24713882298865364577105598183798671e-1"},
    {FFN_ACT_GELU_ERF, 1, -0x1.80974a0p-1f, "2.75140502148379892621306190293417644e-4"},
    {FFN_ACT_SILU, 0, -0x1.400p+4f, "-4.12230723638040716286172425894918538e-8"},
    {FFN_ACT_SILU, 0, -0x1.300p+3f, "-7.11039161350806695100454529987934395e-4"},
    {FFN_ACT_SILU, 0, -0x1.400p+2f, "-3.3464254621424277796809901906625902e-2"},
    {FFN_ACT_SILU, 0, -0x1.800p+0f, "-2.73638285709534510589174232015627629e-1"},
    {FFN_ACT_SILU, 0, -0x1.000p-1f, "-1.88770334399072717680549717127245761e-1"},
    {FFN_ACT_SILU, 0, 0x1.000p-2f, "1.40544125221449526006830909475736588e-1"},
    {FFN_ACT_SILU, 0, 0x1.000p+0f, "7.31058578630004879251159241821836274e-1"},
    {FFN_ACT_SILU, 0, 0x1.800p+1f, "2.8577223804672996573634555446847434"},
    {FFN_ACT_SILU, 0, 0x1.400p+3f, "9.99954602131297565605495223767236511"},
    {FFN_ACT_SILU, 0, -0x1.900p+3f, "-4.65829910523320173261001184829836477e-5"},
    {FFN_ACT_SILU, 0, -0x1.900p+6f, "-3.72007597602083596295969580386311834e-42"},
    {FFN_ACT_SILU, 0, 0x1.79ca100p-67f, "4.99999984132761269450894373015687876e-21"},
    {FFN_ACT_SILU, 0, -0x1.0556400p-128f, "-1.50000032295799988613131340021852466e-39"},
    {FFN_ACT_SILU, 0, -0x1.8142a00p-1f, "-2.41002263337918396764084164974560333e-1"},
    {FFN_ACT_SILU, 0, -0x1.80ead20p-1f, "-2.40897358509874410881992552610296566e-1"},
    {FFN_ACT_SILU, 0, -0x1.4749740p+0f, "-2.78464542761073776762885226120515152e-1"},
    {FFN_ACT_SILU, 0, -0x1.80974a0p-1f, "-2.40797402466884763774891758997746406e-1"},
    {FFN_ACT_SILU, 1, -0x1.400p+4f, "-3.91619186606467832916150299783825493e-8"},
    {FFN_ACT_SILU, 1, -0x1.300p+3f, "-6.36139715241356047351202696795860265e-4"},
    {FFN_ACT_SILU, 1, -0x1.400p+2f, "-2.65474324296659190106306921393960034e-2"},
    {FFN_ACT_SILU, 1, -0x1.800p+0f, "-4.12941542991429443595172943072652926e-2"},
    {FFN_ACT_SILU, 1, -0x1.000p-1f, "2.60038812697348190826448086743988049e-1"},
    {FFN_ACT_SILU, 1, 0x1.000p-2f, "6.23710021570197690923636623542309765e-1"},
    {FFN_ACT_SILU, 1, 0x1.000p+0f, "9.276705118714867317885839754077453e-1"},
    {FFN_ACT_SILU, 1, 0x1.800p+1f, "1.08810410601516961706923193353520271"},
    {FFN_ACT_SILU, 1, 0x1.400p+3f, "1.00040856020865708231581964419894988"},
    {FFN_ACT_SILU, 1, -0x1.900p+3f, "-4.28561781701410254084291517426004597e-5"},
    {FFN_ACT_SILU, 1, -0x1.900p+6f, "-3.68287521626062760333009884582448715e-42"},
    {FFN_ACT_SILU, 1, 0x1.79ca100p-67f, "5.00000000000000000004999999841327613e-1"},
    {FFN_ACT_SILU, 1, -0x1.0556400p-128f, "5.0e-1"},
    {FFN_ACT_SILU, 1, -0x1.8142a00p-1f, "1.56472399139164287260429483368264202e-1"},
    {FFN_ACT_SILU, 1, -0x1.80ead20p-1f, "1.56724696556232662609156354051852237e-1"},
    {FFN_ACT_SILU, 1, -0x1.4749740p+0f, "-2.82703966835543666902039304408437783e-9"},
    {FFN_ACT_SILU, 1, -0x1.80974a0p-1f, "1.56964833331829299087031664477820242e-1"},
    {FFN_ACT_SIGMOID, 0, -0x1.400p+4f, "2.06115361819020358143086212947459269e-9"},
    {FFN_ACT_SIGMOID, 0, -0x1.300p+3f, "7.48462275106112310632057399987299363e-5"},
    {FFN_ACT_SIGMOID, 0, -0x1.400p+2f, "6.69285092428485555936198038132518039e-3"},
    {FFN_ACT_SIGMOID, 0, -0x1.800p+0f, "1.82425523806356340392782821343751752e-1"},
    {FFN_ACT_SIGMOID, 0, -0x1.000p-1f, "3.77540668798145435361099434254491521e-1"},
    {FFN_ACT_SIGMOID, 0, 0x1.000p-2f, "5.62176500885798104027323637902946354e-1"},
    {FFN_ACT_SIGMOID, 0, 0x1.000p+0f, "7.31058578630004879251159241821836274e-1"},
    {FFN_ACT_SIGMOID, 0, 0x1.800p+1f, "9.52574126822433219121151848228247799e-1"},
    {FFN_ACT_SIGMOID, 0, 0x1.400p+3f, "9.99954602131297565605495223767236511e-1"},
    {FFN_ACT_SIGMOID, 0, -0x1.900p+3f, "3.72663928418656138608800947863869182e-6"},
    {FFN_ACT_SIGMOID, 0, -0x1.900p+6f, "3.72007597602083596295969580386311834e-44"},
    {FFN_ACT_SIGMOID, 0, 0x1.79ca100p-67f, "5.00000000000000000002499999920663806e-1"},
    {FFN_ACT_SIGMOID, 0, -0x1.0556400p-128f, "5.0e-1"},
    {FFN_ACT_SIGMOID, 0, -0x1.8142a00p-1f, "3.20285203516065160910271842634233625e-1"},
    {FFN_ACT_SIGMOID, 0, -0x1.80ead20p-1f, "3.20431059296950711941014012286425924e-1"},
    {FFN_ACT_SIGMOID, 0, -0x1.4749740p+0f, "2.17811703508522751501589449439813852e-1"},
    {FFN_ACT_SIGMOID, 0, -0x1.80974a0p-1f, "3.20569848879361922370087121345224754e-1"},
    {FFN_ACT_SIGMOID, 1, -0x1.400p+4f, "2.0611536139418493436522946053928571e-9"},
    {FFN_ACT_SIGMOID, 1, -0x1.300p+3f, "7.4840625552838660885727203873114758e-5"},
    {FFN_ACT_SIGMOID, 1, -0x1.400p+2f, "6.64805667079015491399853450414423676e-3"},
    {FFN_ACT_SIGMOID, 1, -0x1.800p+0f, "1.49146452070332856501533410434011363e-1"},
    {FFN_ACT_SIGMOID, 1, -0x1.000p-1f, "2.35003712201594489069302695021006944e-1"},
    {FFN_ACT_SIGMOID, 1, 0x1.000p-2f, "2.46134082737598347585251942557453643e-1"},
    {FFN_ACT_SIGMOID, 1, 0x1.000p+0f, "1.96611933241481852537424733585909026e-1"},
    {FFN_ACT_SIGMOID, 1, 0x1.800p+1f, "4.5176659730912132649360028435651638e-2"},
    {FFN_ACT_SIGMOID, 1, 0x1.400p+3f, "4.53958077359516710324420431713370951e-5"},
    {FFN_ACT_SIGMOID, 1, -0x1.900p+3f, "3.72662539634620694356137289769913212e-6"},
    {FFN_ACT_SIGMOID, 1, -0x1.900p+6f, "3.72007597602083596295969580386311834e-44"},
    {FFN_ACT_SIGMOID, 1, 0x1.79ca100p-67f, "2.5e-1"},
    {FFN_ACT_SIGMOID, 1, -0x1.0556400p-128f, "2.5e-1"},
    {FFN_ACT_SIGMOID, 1, -0x1.8142a00p-1f, "2.17702591924737881997200428522309713e-1"},
    {FFN_ACT_SIGMOID, 1, -0x1.80ead20p-1f, "2.17754995534784768656708155982593902e-1"},
    {FFN_ACT_SIGMOID, 1, -0x1.4749740p+0f, "1.70369765323238129205380050266430055e-1"},
    {FFN_ACT_SIGMOID, 1, -0x1.80974a0p-1f, "2.17804820868824982014476474358017115e-1"},
    {FFN_ACT_QUICK_GELU, 0, -0x1.400p+4f, "-3.29341024139937172832873036795044275e-14"},
    {FFN_ACT_QUICK_GELU, 0, -0x1.300p+3f, "-9.02851005643702041509802429744633716e-7"},
    {FFN_ACT_QUICK_GELU, 0, -0x1.400p+2f, "-1.00701626735236893970541377946518614e-3"},
    {FFN_ACT_QUICK_GELU, 0, -0x1.800p+0f, "-1.08337801552923425270791584698830639e-1"},
    {FFN_ACT_QUICK_GELU, 0, -0x1.000p-1f, "-1.49611563393619876830137971378154213e-1"},
    {FFN_ACT_QUICK_GELU, 0, 0x1.000p-2f, "1.51199649900194180542163034565624025e-1"},
    {FFN_ACT_QUICK_GELU, 0, 0x1.000p+0f, "8.45795765932821295707106826525397338e-1"},
    {FFN_ACT_QUICK_GELU, 0, 0x1.800p+1f, "2.98192869029221403348735873300412605"},
    {FFN_ACT_QUICK_GELU, 0, 0x1.400p+3f, "9.99999959420387051446900097281422169"},
    {FFN_ACT_QUICK_GELU, 0, -0x1.900p+3f, "-7.19937690049185842227514410174193111e-9"},
    {FFN_ACT_QUICK_GELU, 0, -0x1.900p+6f, "-1.21081886852041701980311802143987465e-72"},
    {FFN_ACT_QUICK_GELU, 0, 0x1.79ca100p-67f, "4.99999984132761269452649372904299862e-21"},
    {FFN_ACT_QUICK_GELU, 0, -0x1.0556400p-128f, "-1.50000032295799988613131340021852466e-39"},
    {FFN_ACT_QUICK_GELU, 0, -0x1.8142a00p-1f, "-1.63609873229124612682976117175447644e-1"},
    {FFN_ACT_QUICK_GELU, 0, -0x1.80ead20p-1f, "-1.63610114394107612486660706354160192e-1"},
    {FFN_ACT_QUICK_GELU, 0, -0x1.4749740p+0f, "-1.30315652231595736996366466817993711e-1"},
    {FFN_ACT_QUICK_GELU, 0, -0x1.80974a0p-1f, "-1.63610189636353556652171622996921435e-1"},
    {FFN_ACT_QUICK_GELU, 1, -0x1.400p+4f, "-5.4407137187917528647841461185720964e-14"},
    {FFN_ACT_QUICK_GELU, 1, -0x1.300p+3f, "-1.44161531760433064470984656095544592e-6"},
    {FFN_ACT_QUICK_GELU, 1, -0x1.400p+2f, "-1.51219324013123088126720736843293967e-3"},
    {FFN_ACT_QUICK_GELU, 1, -0x1.800p+0f, "-9.88480646241029258262462142094807393e-2"},
    {FFN_ACT_QUICK_GELU, 1, -0x1.000p-1f, "1.20778088034585728981674828945326912e-1"},
    {FFN_ACT_QUICK_GELU, 1, 0x1.000p-2f, "7.06500440974266914654956262297336994e-1"},
    {FFN_ACT_QUICK_GELU, 1, 0x1.000p+0f, "1.06777960655633405656694997451867708"},
    {FFN_ACT_QUICK_GELU, 1, 0x1.800p+1f, "1.02454832390565234874260546472519769"},
    {FFN_ACT_QUICK_GELU, 1, 0x1.400p+3f, "1.00000065008537140890178077603106755"},
    {FFN_ACT_QUICK_GELU, 1, -0x1.900p+3f, "-1.16773893255404816217637668792158963e-8"},
    {FFN_ACT_QUICK_GELU, 1, -0x1.900p+6f, "-2.04870552553654559750687569227626791e-72"},
    {FFN_ACT_QUICK_GELU, 1, 0x1.79ca100p-67f, "5.00000000000000000008509999729939597e-1"},
    {FFN_ACT_QUICK_GELU, 1, -0x1.0556400p-128f, "5.0e-1"},
    {FFN_ACT_QUICK_GELU, 1, -0x1.8142a00p-1f, "-4.83865489250995333991071653274012297e-4"},
    {FFN_ACT_QUICK_GELU, 1, -0x1.80ead20p-1f, "-2.36077591169808729312223594815574675e-4"},
    {FFN_ACT_QUICK_GELU, 1, -0x1.4749740p+0f, "-9.72577653640064298548415628023507096e-2"},
    {FFN_ACT_QUICK_GELU, 1, -0x1.80974a0p-1f, "4.26145414672801389012405527101316172e-9"},
};

// Zeros of the derivatives, from mpmath's findroot at 60 digits.
static const struct {
    enum ffn_act act;
    double zero;
} ffn__zeros[] = {
    {FFN_ACT_GELU_TANH, -0.7524614220710162584879544},
    {FFN_ACT_GELU_ERF, -0.7517915246935644574579049},
    {FFN_ACT_SILU, -1.278464542761073795109359},
    {FFN_ACT_QUICK_GELU, -0.7511542554412889512980956},
};

static void ffn__check_mpmath(struct ffn_oracle *o) {
    mpfr_t v;
    mpfr_init2(v, 256);
    for (size_t i = 0; i < sizeof ffn__mpmath / sizeof ffn__mpmath[0]; i++) {
        const enum ffn_act act = ffn__mpmath[i].act;
        const float x = ffn__mpmath[i].x;
        float f;
        const double d = ffn_oracle_eval(o, act, ffn__mpmath[i].deriv, x, 1.0f, 1.0f, &f);
        mpfr_set_str(v, ffn__mpmath[i].value, 10, MPFR_RNDN);
        const double want = mpfr_get_d(v, MPFR_RNDN);
        const float want_f = mpfr_get_flt(v, MPFR_RNDN);
        // Values that round to ±0 in every storage type may come back as a signed zero.
        const bool zero_ok = fabs(want) < 0x1p-152 && d == 0 && signbit(d) == signbit(want);
        CHECK(zero_ok || fabs(d - want) <= 0x1p-50 * fabs(want),
              "%s%s(%a): oracle %.17g, mpmath %s", ffn_act_name(act),
              ffn__mpmath[i].deriv ? "'" : "", x, d, ffn__mpmath[i].value);
        CHECK(ffn_test_same(f, want_f), "%s%s(%a): oracle rounds to %a, mpmath to %a",
              ffn_act_name(act), ffn__mpmath[i].deriv ? "'" : "", x, f, want_f);
    }
    mpfr_clear(v);
}

// Saturated products: silu(192)·u = 192·u·(1 - e^-192·...) where 192·u lies exactly on an f32
// midpoint; the value is just below it and must round down, not to even. And
// silu'(192)·u·dh = u·dh·(1 + ε) with u·dh on a midpoint: rounds up.
static void ffn__check_saturated(struct ffn_oracle *o) {
    const float u = 1.0f + 0x1p-23f;
    float f;
    ffn_oracle_eval(o, FFN_ACT_SILU, false, 192.0f, u, 1.0f, &f);
    CHECK(f == 192.0f + 0x1p-16f, "silu(192)·(1+2^-23): got %a, want %a", f, 192.0f + 0x1p-16f);
    ffn_oracle_eval(o, FFN_ACT_GELU_ERF, false, 192.0f, -u, 1.0f, &f);
    CHECK(f == -(192.0f + 0x1p-16f), "gelu_erf(192)·-(1+2^-23): got %a", f);
    ffn_oracle_eval(o, FFN_ACT_SILU, true, 192.0f, u, 1.5f, &f);
    CHECK(f == 1.5f + 0x1p-22f, "silu'(192)·(1+2^-23)·1.5: got %a, want %a", f, 1.5f + 0x1p-22f);
    ffn_oracle_eval(o, FFN_ACT_GELU_TANH, true, 1e30f, u, 1.5f, &f);
    CHECK(f == 1.5f + 0x1p-22f, "gelu_tanh'(1e30)·(1+2^-23)·1.5: got %a", f);
    // Not saturated, same midpoint structure: silu(20)·u is below 20·u by e^-20 relative.
    const double d = ffn_oracle_eval(o, FFN_ACT_SILU, false, 20.0f, 1.0f, 1.0f, &f);
    CHECK(f == 20.0f && d < 20.0, "silu(20): got %a (%.17g)", f, d);
}

// Results far below the smallest subnormal: ±0 with the sign of the exact value.
static void ffn__check_tiny(struct ffn_oracle *o) {
    static const struct {
        enum ffn_act act;
        bool deriv;
        float x, m1;
        bool neg;
    } cases[] = {
        {FFN_ACT_SILU, false, -200.0f, 1.0f, true},
        {FFN_ACT_SILU, false, -1e30f, -3.0f, false},
        {FFN_ACT_GELU_ERF, false, -40.0f, 1.0f, true},
        {FFN_ACT_GELU_TANH, false, -30.0f, 1.0f, true},
        {FFN_ACT_SIGMOID, false, -200.0f, 1.0f, false},
        {FFN_ACT_SIGMOID, true, 300.0f, -1.0f, true},
        {FFN_ACT_QUICK_GELU, false, -1e4f, 2.0f, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float f;
        const double d =
            ffn_oracle_eval(o, cases[i].act, cases[i].deriv, cases[i].x, cases[i].m1, 1.0f, &f);
        CHECK(f == 0 && d == 0 && (bool)signbit(f) == cases[i].neg,
              "%s%s(%g)·%g: got %a (%g), want %s0", ffn_act_name(cases[i].act),
              cases[i].deriv ? "'" : "", cases[i].x, cases[i].m1, f, d, cases[i].neg ? "-" : "+");
    }
    // Still representable: silu(-100) = -3.72e-42 (subnormal), from the mpmath table's value.
    float f;
    ffn_oracle_eval(o, FFN_ACT_SILU, false, -100.0f, 1.0f, 1.0f, &f);
    CHECK(f < 0 && f > -1e-41f, "silu(-100): got %a", f);
}

// The contract's special values.
static void ffn__check_specials(struct ffn_oracle *o) {
    for (int a = 0; a < FFN_ACT_COUNT; a++) {
        const enum ffn_act act = (enum ffn_act)a;
        float f;
        ffn_oracle_eval(o, act, false, NAN, 1.0f, 1.0f, &f);
        CHECK(isnan(f), "%s(NaN) = %a", ffn_act_name(act), f);
        ffn_oracle_eval(o, act, true, NAN, 1.0f, 1.0f, &f);
        CHECK(isnan(f), "%s'(NaN) = %a", ffn_act_name(act), f);
        ffn_oracle_eval(o, act, false, INFINITY, 1.0f, 1.0f, &f);
        const float want_pinf = act == FFN_ACT_SIGMOID ? 1.0f : INFINITY;
        CHECK(f == want_pinf, "%s(+inf) = %a", ffn_act_name(act), f);
        ffn_oracle_eval(o, act, false, -INFINITY, 1.0f, 1.0f, &f);
        if (act == FFN_ACT_IDENTITY)
            CHECK(f == -INFINITY, "identity(-inf) = %a", f);
        else
            CHECK(f == 0 && (bool)signbit(f) == (act != FFN_ACT_RELU && act != FFN_ACT_SIGMOID),
                  "%s(-inf) = %a", ffn_act_name(act), f);
        ffn_oracle_eval(o, act, false, -0.0f, 1.0f, 1.0f, &f);
        if (act == FFN_ACT_SIGMOID)
            CHECK(f == 0.5f, "sigmoid(-0) = %a", f);
        else
            CHECK(f == 0 && (bool)signbit(f) == (act != FFN_ACT_RELU), "%s(-0) = %a",
                  ffn_act_name(act), f);
        ffn_oracle_eval(o, act, true, INFINITY, 1.0f, 1.0f, &f);
        CHECK(f == (act == FFN_ACT_SIGMOID ? 0.0f : 1.0f), "%s'(+inf) = %a", ffn_act_name(act), f);
        ffn_oracle_eval(o, act, true, -INFINITY, 1.0f, 1.0f, &f);
        CHECK(f == (act == FFN_ACT_IDENTITY ? 1.0f : 0.0f), "%s'(-inf) = %a", ffn_act_name(act), f);
    }
    float f;
    ffn_oracle_eval(o, FFN_ACT_SILU, false, -INFINITY, INFINITY, 1.0f, &f);
    CHECK(isnan(f), "silu(-inf)·inf = %a, want NaN (0·inf)", f);
    ffn_oracle_eval(o, FFN_ACT_RELU, false, -1.0f, -2.0f, 1.0f, &f);
    CHECK(f == 0 && signbit(f), "relu(-1)·-2 = %a, want -0", f);
}

// The ulp metric on hand-computed cases.
static void ffn__check_metric(void) {
    static const struct {
        double got, exact;
        enum ffn_dtype dt;
        double scale;
        bool strict;
        double want;
    } cases[] = {
        {1.0, 1.0, FFN_DTYPE_F32, 0, true, 0},
        {1.0 + 0x1p-23, 1.0, FFN_DTYPE_F32, 0, true, 1},
        {1.0, 1.0 + 0x1p-24, FFN_DTYPE_F32, 0, true, 0.5},
        {1.0 - 0x1p-24, 1.0, FFN_DTYPE_F32, 0, true, 0.5},    // ulp of the exact value (1): 2^-23
        {1.0, 1.0 - 0x1p-25, FFN_DTYPE_F32, 0, true, 0.5},    // ulp below 1: 2^-24
        {0x1p-149, 0x1.8p-149, FFN_DTYPE_F32, 0, true, 0.5},  // subnormal spacing
        {0.0, 0x1p-151, FFN_DTYPE_F32, 0, true, 0.25},
        {1.0 + 0x1p-7, 1.0, FFN_DTYPE_BF16, 0, true, 1},
        {1.0 + 0x1p-10, 1.0, FFN_DTYPE_F16, 0, true, 1},
        {0x1p-24, 0x1.8p-24, FFN_DTYPE_F16, 0, true, 0.5},  // f16 subnormal spacing 2^-24
        {65504.0, 65504.0 + 8, FFN_DTYPE_F16, 0, true, 0.25},
        {INFINITY, 65520.0, FFN_DTYPE_F16, 0, true, 0},  // overflows in f16 too
        {INFINITY, 65519.0, FFN_DTYPE_F16, 0, true, FFN_ULP_HUGE},
        {65504.0, INFINITY, FFN_DTYPE_F16, 0, true, FFN_ULP_HUGE},
        {NAN, NAN, FFN_DTYPE_F32, 0, true, 0},
        {1.0, NAN, FFN_DTYPE_F32, 0, true, FFN_ULP_HUGE},
        {NAN, 1.0, FFN_DTYPE_F32, 0, true, FFN_ULP_HUGE},
        {0.0, -0.0, FFN_DTYPE_F32, 0, true, FFN_ULP_HUGE},
        {0.0, -0.0, FFN_DTYPE_F32, 0, false, 0},
        {0.0, -0x1p-160, FFN_DTYPE_F32, 0, true, FFN_ULP_HUGE},  // rounds to -0: sign checked
        {-0.0, -0x1p-160, FFN_DTYPE_F32, 0, true, 0x1p-11},
        {0x1p-30, 0.0, FFN_DTYPE_F32, 0.5, false, 0x1p-30 / 0x1p-24},  // absolute, ulp(0.5)
        {3e-9, 1e-9, FFN_DTYPE_F32, 0.25, false, 2e-9 / 0x1p-25},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const double u = ffn_count_ulp(cases[i].got, cases[i].exact, cases[i].dt, cases[i].scale,
                                       cases[i].strict);
        CHECK(fabs(u - cases[i].want) <= 1e-9 * cases[i].want,
              "count_ulp(%a, %a, %s, scale %g, strict %d) = %.17g, want %.17g", cases[i].got,
              cases[i].exact, ffn_dtype_name(cases[i].dt), cases[i].scale, cases[i].strict, u,
              cases[i].want);
    }
    // The bound table of docs/numerics.md.
    CHECK(ffn_ulp_bound(FFN_KOP_ACT_FWD, FFN_ACT_GELU_TANH, false) == 4 &&
              ffn_ulp_bound(FFN_KOP_ACT_FWD, FFN_ACT_GELU_TANH, true) == 2 &&
              ffn_ulp_bound(FFN_KOP_GLU_FWD, FFN_ACT_GELU_ERF, false) == 4 &&
              ffn_ulp_bound(FFN_KOP_GLU_FWD, FFN_ACT_SILU, false) == 2 &&
              ffn_ulp_bound(FFN_KOP_ACT_BWD, FFN_ACT_SILU, false) == 8,
          "bound table differs from docs/numerics.md");
}

// Rounding to bf16 / f16 by double arithmetic, on hand-computed cases.
static void ffn__check_rounding(void) {
    static const struct {
        double v;
        enum ffn_dtype dt;
        double want;
    } cases[] = {
        {1.0 + 0x1p-8, FFN_DTYPE_BF16, 1.0},               // tie: to even
        {1.0 + 3 * 0x1p-8, FFN_DTYPE_BF16, 1.0 + 0x1p-6},  // tie: to even (up)
        {1.0 + 0x1p-8 + 0x1p-30, FFN_DTYPE_BF16, 1.0 + 0x1p-7},
        {0x1.ffp127, FFN_DTYPE_BF16, INFINITY},  // overflow threshold: a tie, to inf
        {0x1.fefffp127, FFN_DTYPE_BF16, 0x1.fep127},
        {0x1p-133, FFN_DTYPE_BF16, 0x1p-133},    // smallest bf16 subnormal
        {0x1p-134, FFN_DTYPE_BF16, 0.0},         // tie between 0 and 2^-133
        {0x1.8p-133, FFN_DTYPE_BF16, 0x1p-132},  // tie at the subnormal spacing
        {65519.0, FFN_DTYPE_F16, 65504.0},
        {65520.0, FFN_DTYPE_F16, INFINITY},
        {0x1p-25, FFN_DTYPE_F16, 0.0},  // tie between 0 and 2^-24: even 0
        {0x1.000002p-25, FFN_DTYPE_F16, 0x1p-24},
        {-0x1.8p-24, FFN_DTYPE_F16, -0x1p-23},
        {-1e-30, FFN_DTYPE_F16, -0.0},
        {1.0 + 0x1p-11, FFN_DTYPE_F16, 1.0},
        {0x1.fffffep127, FFN_DTYPE_F32, 0x1.fffffep127},
        {0x1.ffffffp127, FFN_DTYPE_F32, INFINITY},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const double g = ffn_round_double(cases[i].v, cases[i].dt);
        CHECK(g == cases[i].want && signbit(g) == signbit(cases[i].want),
              "round_double(%a, %s) = %a, want %a", cases[i].v, ffn_dtype_name(cases[i].dt), g,
              cases[i].want);
    }
}

// mpfr_get_flt (the oracle's f32) against ffn_round_double of its double, away from rounding
// boundaries: two independent roundings that must agree, subnormal results included.
static void ffn__check_get_flt(struct ffn_oracle *o) {
    const int64_t n = ffn_inputs_strided(NULL, 0, 1u << 20, 12345);
    float *xs = ffn_test_alloc((size_t)n * 4);
    ffn_inputs_strided(xs, n, 1u << 20, 12345);
    for (int a = 0; a < FFN_ACT_COUNT; a++)
        for (int64_t i = 0; i < n; i++) {
            float f;
            const double d = ffn_oracle_eval(o, (enum ffn_act)a, false, xs[i], 0.3f, 1.0f, &f);
            if (ffn_near_rounding_boundary(d, FFN_DTYPE_F32, 1e-6)) continue;
            const double want = ffn_round_double(d, FFN_DTYPE_F32);
            CHECK(ffn_test_same(f, (float)want), "%s(%a)·0.3: get_flt %a, rounded %a",
                  ffn_act_name((enum ffn_act)a), xs[i], f, want);
        }
    free(xs);
}

static void ffn__check_sets(struct ffn_oracle *o) {
    for (size_t i = 0; i < sizeof ffn__zeros / sizeof ffn__zeros[0]; i++) {
        const double z = ffn_dact_zero(ffn__zeros[i].act);
        CHECK(fabs(z - ffn__zeros[i].zero) < 1e-14, "zero of %s': %.17g, want %.17g",
              ffn_act_name(ffn__zeros[i].act), z, ffn__zeros[i].zero);
        // The oracle's derivative changes sign between the floats around the zero.
        const float zf = (float)ffn__zeros[i].zero;
        const double lo =
            ffn_oracle_eval(o, ffn__zeros[i].act, true, nextafterf(zf, -2.0f), 1, 1, NULL);
        const double hi =
            ffn_oracle_eval(o, ffn__zeros[i].act, true, nextafterf(zf, 0.0f), 1, 1, NULL);
        CHECK(lo < 0 && hi > 0 && fabs(lo) < 1e-6 && fabs(hi) < 1e-6, "%s' around its zero: %g, %g",
              ffn_act_name(ffn__zeros[i].act), lo, hi);
    }
    CHECK(isnan(ffn_dact_zero(FFN_ACT_RELU)) && isnan(ffn_dact_zero(FFN_ACT_SIGMOID)),
          "relu' and sigmoid' have no zero in [-2, -0.5]");
    CHECK(ffn_inputs_strided(NULL, 0, 4093, 0) == (((int64_t)1 << 32) + 4092) / 4093,
          "strided count");
    const int64_t n = ffn_inputs_hard(NULL, 0);
    float *xs = ffn_test_alloc((size_t)n * 4);
    CHECK(ffn_inputs_hard(xs, n) == n && n > 100000, "hard set: %lld", (long long)n);
    int64_t tail = 0, sub = 0;
    for (int64_t i = 0; i < n; i++) {
        tail += xs[i] >= -15.0f && xs[i] <= -3.0f;
        sub += xs[i] != 0 && fabsf(xs[i]) < FLT_MIN;
    }
    CHECK(tail >= 32768 && sub >= 8192, "hard set: %lld in the GeLU tail, %lld subnormal",
          (long long)tail, (long long)sub);
    free(xs);
}

int main(void) {
    ffn_check_begin("oracle");
    struct ffn_oracle o;
    ffn_oracle_init(&o);
    ffn__check_mpmath(&o);
    ffn__check_saturated(&o);
    ffn__check_tiny(&o);
    ffn__check_specials(&o);
    ffn__check_metric();
    ffn__check_rounding();
    ffn__check_get_flt(&o);
    ffn__check_sets(&o);
    CHECK(o.n_unsure == 0, "%lld undecided roundings", (long long)o.n_unsure);
    ffn_oracle_clear(&o);
    return ffn_check_summary();
}
